/**
 * POST {auth_url}/api/auth/oauth2/register: dynamic client registration (RFC 7591).
 * Public clients by default; a confidential client's secret is shown once and kept hashed.
 * Server-owned fields in the request (client_id, client_secret, …) are ignored.
 */
import { readBodyCapped } from "../http/body.ts";
import { HttpError } from "../http/errors.ts";
import type { Handler } from "../http/handler.ts";
import type { SharedRateLimiter } from "../http/shared_rate_limiter.ts";
import { parseClientMetadata } from "./client_metadata.ts";
import type { Clients } from "./clients.ts";
import type { ScopeCatalogue } from "./scopes.ts";
import { OAuthError, oauthJsonResponse, withOAuthErrors } from "./oauth_error.ts";

export const MAX_REGISTRATION_BYTES = 16 * 1024;

export function createRegistrationEndpoint(
  deps: { clients: Clients; limiter: SharedRateLimiter; scopes: ScopeCatalogue },
): Handler {
  return withOAuthErrors(async (request, context) => {
    const decision = await deps.limiter.take(context.clientAddress);
    if (!decision.allowed) {
      await request.body?.cancel();
      throw new OAuthError(
        "temporarily_unavailable",
        `Too many registrations from this address; retry after ${decision.retryAfterSeconds} s`,
        429,
        { "Retry-After": String(decision.retryAfterSeconds) },
      );
    }
    const type = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") {
      await request.body?.cancel();
      throw new OAuthError(
        "invalid_client_metadata",
        "Content-Type must be application/json",
        415,
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await readBodyCapped(request, MAX_REGISTRATION_BYTES);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      throw new OAuthError("invalid_client_metadata", error.message, error.status, error.headers);
    }
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    } catch {
      throw new OAuthError("invalid_client_metadata", "The body is not a JSON object");
    }
    const parsed = parseClientMetadata(json, deps.scopes);
    if (!parsed.ok) throw new OAuthError(parsed.code, parsed.description);
    const { client, secret } = await deps.clients.register(parsed.metadata);
    const body: Record<string, unknown> = {
      client_id: client.clientId,
      client_id_issued_at: Math.floor(client.issuedAt / 1000),
      redirect_uris: client.redirectUris,
      grant_types: client.grantTypes,
      response_types: ["code"],
      token_endpoint_auth_method: client.tokenEndpointAuthMethod,
      application_type: parsed.metadata.applicationType,
    };
    if (client.clientName !== null) body.client_name = client.clientName;
    if (client.scope !== null) body.scope = client.scope;
    if (secret !== null) {
      body.client_secret = secret;
      body.client_secret_expires_at = 0;
    }
    return oauthJsonResponse(body, 201);
  });
}
