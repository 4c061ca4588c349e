/**
 * POST {auth_url}/api/auth/oauth2/revoke (RFC 7009). A refresh token or access token of
 * the authenticated client revokes its whole grant. Unknown tokens are answered 200
 * (§2.2); a token of another client is refused and nothing is revoked.
 */
import { decodeJwt } from "jose/jwt/decode";
import type { Handler } from "../http/handler.ts";
import type { Store } from "../store/store.ts";
import { createClientEndpoint, type TokenBudgets } from "./client_endpoint.ts";
import type { Clients } from "./clients.ts";
import { getGrant, revokeGrant } from "./grants.ts";
import { OAuthError } from "./oauth_error.ts";
import type { OAuthMetrics } from "./oauth_metrics.ts";
import { refreshKey, type RefreshRecord } from "./refresh_tokens.ts";
import { hashSecret } from "../secrets.ts";

export interface RevocationDeps {
  readonly store: Store;
  readonly clients: Clients;
  readonly budgets: TokenBudgets;
  /** Verifies an access token's signature and issuer (expiry ignored: revoking an expired one is fine). */
  readonly accessTokenGrant: (jwt: string) => Promise<string | null>;
  readonly oauthMetrics?: OAuthMetrics | undefined;
}

export function createRevocationEndpoint(deps: RevocationDeps): Handler {
  return createClientEndpoint(deps, async ({ client, fields, admit }) => {
    const token = fields.token;
    if (token === undefined || token === "") {
      throw new OAuthError("invalid_request", "token is required");
    }
    const hint = fields.token_type_hint;
    if (hint !== undefined && hint !== "refresh_token" && hint !== "access_token") {
      throw new OAuthError(
        "unsupported_token_type",
        `token_type_hint ${JSON.stringify(hint)} is not supported`,
      );
    }
    const gid = await _grantOf(deps, token);
    const grant = gid === null ? null : await getGrant(deps.store, gid);
    if (grant) {
      if (grant.clientId !== client.clientId) {
        throw new OAuthError("unauthorized_client", "The token was issued to another client");
      }
      // A token of its own proves a public client; an unknown one proves nothing.
      await admit();
      if (await revokeGrant(deps.store, grant.id)) deps.oauthMetrics?.grantRevoked("client");
    }
    return new Response(null, { status: 200, headers: { "Cache-Control": "no-store" } });
  });
}

async function _grantOf(deps: RevocationDeps, token: string): Promise<string | null> {
  const entry = await deps.store.get<RefreshRecord>(refreshKey(await hashSecret(token)));
  if (entry) return entry.value.gid;
  try {
    decodeJwt(token);
  } catch {
    return null;
  }
  return await deps.accessTokenGrant(token);
}
