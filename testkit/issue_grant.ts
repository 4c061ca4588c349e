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
import { UNLIMITED } from "../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../src/oauth/cimd.ts";
import { type ClientRecord, createClients } from "../src/oauth/clients.ts";
import { issuerOf } from "../src/oauth/issuer.ts";
import { SPEC_SCOPES } from "../src/oauth/scopes.ts";
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

/**
 * A public native client registered as dynamic registration registers it (PKCE, no secret), for
 * grants and token requests of its own; `markUsed` as after its first authorization.
 */
export async function registerPublicClient(
  deps: { readonly config: Config; readonly store: Store; readonly now: () => number },
  input: { readonly clientName: string; readonly redirectUri: string; readonly refresh: boolean },
): Promise<ClientRecord> {
  const { config, store, now } = deps;
  const clients = createClients({
    store,
    now,
    documents: createMetadataDocuments({ config, now, budget: UNLIMITED, scopes: SPEC_SCOPES }),
    issuer: issuerOf(config),
  });
  const { client } = await clients.register({
    clientName: input.clientName,
    redirectUris: [input.redirectUri],
    grantTypes: input.refresh ? ["authorization_code", "refresh_token"] : ["authorization_code"],
    tokenEndpointAuthMethod: "none",
    scope: null,
    applicationType: "native",
  });
  await clients.markUsed(client);
  return client;
}
