/**
 * CORS of the authorization server (DESIGN.md): metadata, JWKS and registration answer any
 * browser origin; the token and revocation endpoints answer trusted origins only; nothing
 * is ever sent with credentials, and the authorization endpoint has no CORS at all.
 */
import type { Config } from "../config.ts";
import { PUBLIC_CORS_HEADERS, publicPreflight, trustedOriginHeaders } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";

export function withPublicCors(handler: Handler): Handler {
  return async (request, context) =>
    _addHeaders(await handler(request, context), PUBLIC_CORS_HEADERS);
}

export function publicPreflightHandler(methods: string): Handler {
  return (request) => {
    request.body?.cancel();
    return Promise.resolve(publicPreflight(methods));
  };
}

export function withTrustedCors(handler: Handler, config: Config): Handler {
  return async (request, context) => {
    const response = await handler(request, context);
    const origin = request.headers.get("Origin");
    return origin !== null && config.trustedOrigins.includes(origin)
      ? _addHeaders(response, trustedOriginHeaders(origin))
      : response;
  };
}

export function trustedPreflightHandler(methods: string, config: Config): Handler {
  return (request) => {
    request.body?.cancel();
    const origin = request.headers.get("Origin");
    const headers: Record<string, string> = { Allow: `${methods}, OPTIONS` };
    if (origin !== null && config.trustedOrigins.includes(origin)) {
      Object.assign(headers, trustedOriginHeaders(origin), {
        "Access-Control-Allow-Methods": methods,
        "Access-Control-Allow-Headers": "Content-Type, Authorization",
        "Access-Control-Max-Age": "600",
      });
    }
    return Promise.resolve(new Response(null, { status: 204, headers }));
  };
}

function _addHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  const merged = new Headers(response.headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: merged,
  });
}
