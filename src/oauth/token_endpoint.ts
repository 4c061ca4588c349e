/** POST {auth_url}/api/auth/oauth2/token: the HTTP shell around token_grants.ts. */
import type { Handler } from "../http/handler.ts";
import type { RateLimiter } from "../http/rate_limiter.ts";
import { authenticateClient, chargeClaimedClient } from "./client_auth.ts";
import type { Clients } from "./clients.ts";
import { readOAuthForm } from "./form_body.ts";
import { OAuthError, oauthErrorResponse, oauthJsonResponse } from "./oauth_error.ts";
import { exchangeCode, refreshGrant, type TokenGrantDeps } from "./token_grants.ts";

export interface TokenEndpointDeps extends TokenGrantDeps {
  readonly clients: Clients;
  /** Keyed by client_id: 120 a minute per client. */
  readonly limiter: RateLimiter;
}

export function createTokenEndpoint(deps: TokenEndpointDeps): Handler {
  return async (request) => {
    try {
      const fields = await readOAuthForm(request);
      chargeClaimedClient(deps.limiter, request, fields);
      const client = await authenticateClient(request, fields, deps.clients);
      const grantType = fields.grant_type;
      if (grantType === undefined) {
        throw new OAuthError("invalid_request", "grant_type is required");
      }
      if (grantType !== "authorization_code" && grantType !== "refresh_token") {
        throw new OAuthError(
          "unsupported_grant_type",
          `grant_type ${JSON.stringify(grantType)} is not supported`,
        );
      }
      if (!client.grantTypes.includes(grantType)) {
        throw new OAuthError(
          "unauthorized_client",
          `This client is not registered for the ${grantType} grant`,
        );
      }
      const response = grantType === "authorization_code"
        ? await exchangeCode(deps, client, fields)
        : await refreshGrant(deps, client, fields);
      return oauthJsonResponse(response);
    } catch (error) {
      if (error instanceof OAuthError) return oauthErrorResponse(error);
      throw error;
    }
  };
}
