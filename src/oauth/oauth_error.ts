import type { Handler } from "../http/handler.ts";
import { logOutage, type LogSink, OUTAGE_RETRY_SECONDS } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import type { OAuthError as OAuthErrorBody } from "./wire_schemas.ts";

/** RFC 6749 §5.2 / RFC 6750 §3.1 / RFC 7591 §3.2.2 / RFC 8707 error codes this server sends. */
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
  | "invalid_client_metadata"
  | "invalid_token"
  | "insufficient_scope";

/**
 * A protocol error: becomes an OAuthError body at one boundary (`withOAuthErrors`, or the
 * resource server's bearer check), or an error redirect on the authorization endpoint.
 */
export class OAuthError extends Error {
  override name = "OAuthError";
  readonly code: OAuthErrorCode;
  readonly description: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    code: OAuthErrorCode,
    description: string,
    status = code === "invalid_client" ? 401 : 400,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(description);
    this.code = code;
    this.description = description;
    this.status = status;
    this.headers = headers;
  }
}

/** The JSON error response (RFC 6749 §5.2, RFC 6750 §3.1); never cached. */
export function oauthErrorResponse(error: OAuthError): Response {
  const body: OAuthErrorBody = { error: error.code, error_description: error.description };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...error.headers },
  });
}

/**
 * The authorization server's error boundary: an OAuthError thrown by `handler` becomes its
 * JSON error response; anything else propagates (a bare 500 from the request log). Like every
 * answer of these endpoints, errors carry `Pragma: no-cache` too (RFC 6749 §5.1).
 */
export function withOAuthErrors(handler: Handler): Handler {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      const response = oauthErrorResponse(error);
      response.headers.set("Pragma", "no-cache");
      return response;
    }
  };
}

/**
 * A store outage met by an OAuth JSON endpoint (registration, token, revocation): its error
 * shape, 503 `temporarily_unavailable` with Retry-After, and the request log's warning line.
 */
export function withOAuthOutage(handler: Handler, log: LogSink): Handler {
  return async (request, context) => {
    try {
      return await handler(request, context);
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error;
      logOutage(log, error);
      // The outage may come before the body was read (the rate limit's bucket) or after.
      if (!request.bodyUsed) await request.body?.cancel();
      return oauthErrorResponse(
        new OAuthError(
          "temporarily_unavailable",
          `The service is briefly unavailable; retry after ${OUTAGE_RETRY_SECONDS} seconds`,
          503,
          { "Retry-After": String(OUTAGE_RETRY_SECONDS), "Pragma": "no-cache" },
        ),
      );
    }
  };
}

/** A successful JSON answer of the token, registration or revocation endpoints. */
export function oauthJsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      "Pragma": "no-cache",
    },
  });
}
