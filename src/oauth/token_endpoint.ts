/** POST {auth_url}/api/auth/oauth2/token: the HTTP shell around token_grants.ts. */
import type { Handler } from "../http/handler.ts";
import { createClientEndpoint, type TokenBudgets } from "./client_endpoint.ts";
import type { Clients } from "./clients.ts";
import { OAuthError, oauthJsonResponse } from "./oauth_error.ts";
import { exchangeCode, refreshGrant, type TokenGrantDeps } from "./token_grants.ts";
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";

export interface TokenEndpointDeps extends TokenGrantDeps {
  readonly clients: Clients;
  readonly budgets: TokenBudgets;
  /** The request's span is told the grant type and the outcome (never a code or token). */
  readonly tracing?: Tracing | undefined;
}

export function createTokenEndpoint(deps: TokenEndpointDeps): Handler {
  const tracing = deps.tracing ?? NO_TRACING;
  return createClientEndpoint(deps, async (request) => {
    if (!tracing.on) return await _grant(deps, request);
    // Only the registered names: grant_type is what the client sent.
    const grantType = request.fields.grant_type;
    tracing.annotate({
      "oauth.grant_type": grantType === "authorization_code" || grantType === "refresh_token"
        ? grantType
        : "other",
    });
    try {
      const response = await _grant(deps, request);
      tracing.annotate({ "oauth.outcome": "issued" });
      return response;
    } catch (error) {
      if (error instanceof OAuthError) {
        tracing.annotate({ "oauth.outcome": error.code }, error.code);
      }
      throw error;
    }
  });
}

async function _grant(
  deps: TokenEndpointDeps,
  { client, fields, admit }: Parameters<Parameters<typeof createClientEndpoint>[1]>[0],
): Promise<Response> {
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
}
