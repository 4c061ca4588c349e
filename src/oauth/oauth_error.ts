import type { OAuthError as OAuthErrorBody } from "./wire_schemas.ts";

/** RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 8707 error codes this server sends. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "unsupported_token_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "login_required"
  | "consent_required"
  | "server_error"
  | "temporarily_unavailable"
  | "invalid_redirect_uri"
  | "invalid_client_metadata";

/** A protocol error: becomes an OAuthError body (or an error redirect) at one boundary. */
export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly status = code === "invalid_client" ? 401 : 400,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
  }
}

/** The JSON error response; never cached (RFC 6749 §5.1 applies to errors too). */
export function oauthErrorResponse(
  error: OAuthError,
  extraHeaders: Readonly<Record<string, string>> = {},
): Response {
  const body: OAuthErrorBody = { error: error.code, error_description: error.description };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      "Pragma": "no-cache",
      ...error.headers,
      ...extraHeaders,
    },
  });
}

/** A successful JSON answer of the token, registration or revocation endpoints. */
export function oauthJsonResponse(
  body: unknown,
  status = 200,
  extraHeaders: Readonly<Record<string, string>> = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      "Pragma": "no-cache",
      ...extraHeaders,
    },
  });
}
