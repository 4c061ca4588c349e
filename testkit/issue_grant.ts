/**
 * A real grant and its tokens without the browser dance, for tests and benchmarks (never
 * imported by production code):
 *
 *   const { grantId, tokens } = await issueGrant({ config, store, now }, {
 *     accountId, businessId, clientId: "test-client", clientName: "Test client",
 *     scopes: ["app.access"], refresh: true,
 *   });
 *
 * tokens.access_token is an ES256 JWT the workspace verifier accepts, signed with the store's
 * current key, exactly as the token endpoint issues it after a code exchange. The store must
 * be the one the server under test uses (TestServer.store).
 */
import type { Config } from "../src/config/config.ts";
import { createSigningKeys } from "../src/oauth/signing_keys.ts";
import { prepareGrant, type TokenResponse } from "../src/oauth/token_issuance.ts";
import { createTokenSigner } from "../src/oauth/tokens.ts";
import type { Store } from "../src/store/store.ts";

export interface IssueGrantInput {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly clientName?: string;
  readonly scopes: readonly string[];
  /** Also issue a refresh token (as for a client registered for refresh_token). */
  readonly refresh?: boolean;
}

/** Creates a grant and issues its tokens exactly as the token endpoint does (see above). */
export async function issueGrant(
  deps: { config: Config; store: Store; now: () => number },
  input: IssueGrantInput,
): Promise<{ grantId: string; tokens: TokenResponse }> {
  const signer = createTokenSigner({
    config: deps.config,
    keys: createSigningKeys(deps),
    now: deps.now,
  });
  const prepared = await prepareGrant({ store: deps.store, signer, now: deps.now }, {
    accountId: input.accountId,
    businessId: input.businessId,
    clientId: input.clientId,
    clientName: input.clientName ?? input.clientId,
    scopes: input.scopes,
    resource: deps.config.apiUrl,
    refreshable: input.refresh ?? false,
    authTime: deps.now(),
  });
  if (!await deps.store.commit(prepared.checks, prepared.mutations)) {
    throw new Error("Cannot store the grant");
  }
  return { grantId: prepared.grant.id, tokens: prepared.response };
}
