/** POST {auth_url}/api/auth/oauth2/token: the HTTP shell around token_grants.ts. */
import type { Handler } from "../http/handler.ts";
import { createClientEndpoint, type TokenBudgets } from "./client_endpoint.ts";
import type { Clients } from "./clients.ts";
import { OAuthError, oauthJsonResponse } from "./oauth_error.ts";
import { exchangeCode, refreshGrant, type TokenGrantDeps } from "./token_grants.ts";

export interface TokenEndpointDeps extends TokenGrantDeps {
  readonly clients: Clients;
  readonly budgets: TokenBudgets;
}

export function createTokenEndpoint(deps: TokenEndpointDeps): Handler {
  return createClientEndpoint(deps, async ({ client, fields, admit }) => {
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
      ? await exchangeCode(deps, client, fields, admit)
      : await refreshGrant(deps, client, fields, admit);
    return oauthJsonResponse(response);
  });
}
