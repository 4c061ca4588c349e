/**
 * CORS (Fetch standard §3.2): the server's few policies, named once and applied where the
 * routes are declared (the site route tables), as node-oidc-provider names `CORS.open` and
 * `CORS.client`. No policy ever allows credentials: none of our browser callers send any,
 * and the authorization endpoint and the human pages have no CORS at all.
 */
import type { Handler } from "./handler.ts";
import { allowedMethods, type Method, type MethodHandlers, METHODS } from "./router.ts";

type HeaderMap = Readonly<Record<string, string>>;

/** Headers browsers may read from our answers: the challenges MCP clients need. */
const EXPOSED = "WWW-Authenticate, Retry-After, Mcp-Session-Id, MCP-Protocol-Version";

/** How long a browser may reuse a preflight's answer, in seconds. */
const MAX_AGE = "600";

/**
 * Request headers a credential-free answer accepts: any. Nothing rides on these requests that a
 * header could misuse, and MCP clients add their own (MCP-Protocol-Version on discovery). `*`
 * is the Fetch standard's wildcard for requests without credentials, the only kind these
 * answers allow; it never covers Authorization, hence the name beside it.
 */
const ANY_REQUEST_HEADER = "*, Authorization";

export interface CorsPolicy {
  /**
   * The CORS headers of an answer to a request from `origin` (null: it sent none), or null
   * when that origin may not read the answer.
   */
  headersFor(origin: string | null): HeaderMap | null;
  /** The answer to a preflight from `origin` for a route serving `methods` (no OPTIONS). */
  preflight(origin: string | null, methods: string): Response;
}

/** Answers any origin may read: their headers do not depend on the request. */
export interface OpenCorsPolicy extends CorsPolicy {
  readonly headers: HeaderMap;
}

/** Answers only the trusted origins (the three origins and VESTIBULE_TRUSTED_ORIGINS) may read. */
export interface TrustedCorsPolicy extends CorsPolicy {
  allows(origin: string): boolean;
}

export interface CorsPolicies {
  /** Public documents, discovery metadata, JWKS, registration: credential-free, any origin. */
  readonly open: OpenCorsPolicy;
  /** The token and revocation endpoints: trusted origins only. */
  readonly client: TrustedCorsPolicy;
  /**
   * The MCP endpoints: trusted origins only, with the request headers MCP clients send. The
   * MCP transport also refuses other origins outright (mcp/endpoint.ts `mcpRoute`).
   */
  readonly mcp: TrustedCorsPolicy;
}

const OPEN_HEADERS: HeaderMap = Object.freeze({
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": EXPOSED,
});

/** The policies, for the trusted origins of the configuration. */
export function createCorsPolicies(trustedOrigins: readonly string[]): CorsPolicies {
  return {
    open: OPEN_CORS,
    client: _trusted(trustedOrigins, "Content-Type, Authorization"),
    mcp: _trusted(
      trustedOrigins,
      "Content-Type, Accept, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID",
    ),
  };
}

/** The open policy needs no configuration. */
export const OPEN_CORS: OpenCorsPolicy = Object.freeze({
  headers: OPEN_HEADERS,
  headersFor: () => OPEN_HEADERS,
  preflight: (_origin: string | null, methods: string) =>
    new Response(null, {
      status: 204,
      headers: {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": methods,
        "Access-Control-Allow-Headers": ANY_REQUEST_HEADER,
        "Access-Control-Max-Age": MAX_AGE,
      },
    }),
});

/**
 * The discovery documents' policy (AI Catalog, Server Cards): the headers MCP Server Cards
 * ask for on every answer ("CORS Requirements"), so a browser can revalidate a card with
 * If-None-Match and read its ETag. Read-only public metadata, hence any origin.
 */
const DISCOVERY_HEADERS: HeaderMap = Object.freeze({
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET",
  "Access-Control-Allow-Headers": "Content-Type, If-None-Match",
  "Access-Control-Expose-Headers": "ETag",
});

export const DISCOVERY_CORS: OpenCorsPolicy = Object.freeze({
  headers: DISCOVERY_HEADERS,
  headersFor: () => DISCOVERY_HEADERS,
  preflight: () =>
    new Response(null, {
      status: 204,
      headers: { ...DISCOVERY_HEADERS, "Access-Control-Max-Age": MAX_AGE },
    }),
});

function _trusted(origins: readonly string[], allowHeaders: string): TrustedCorsPolicy {
  const trusted = new Set(origins);
  const headersFor = (origin: string | null): HeaderMap | null =>
    origin !== null && trusted.has(origin)
      ? {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Expose-Headers": EXPOSED,
        "Vary": "Origin",
      }
      : null;
  return {
    allows: (origin) => trusted.has(origin),
    headersFor,
    preflight(origin, methods) {
      const cors = headersFor(origin);
      return new Response(null, {
        status: 204,
        headers: cors === null ? { Allow: `${methods}, OPTIONS` } : {
          Allow: `${methods}, OPTIONS`,
          ...cors,
          "Access-Control-Allow-Methods": methods,
          "Access-Control-Allow-Headers": allowHeaders,
          "Access-Control-Max-Age": MAX_AGE,
        },
      });
    },
  };
}

/**
 * A route under `policy`: each answer carries the policy's headers for the request's Origin,
 * and OPTIONS is the policy's preflight. For answers prepared once (static documents), build
 * them with `OpenCorsPolicy.headers` instead and use `corsPreflight`: setting two headers on
 * every answer costs about as much as serving a public read (bench site).
 */
export function withCors(policy: CorsPolicy, handlers: MethodHandlers): MethodHandlers {
  const wrapped: Partial<Record<Method, Handler>> = {};
  for (const method of METHODS) {
    const handler = handlers[method];
    if (handler !== undefined && method !== "OPTIONS") {
      wrapped[method] = withCorsHeaders(policy, handler);
    }
  }
  return { ...handlers, ...wrapped, OPTIONS: corsPreflight(policy, handlers) };
}

/** `handler`'s answers with the policy's headers for the request's Origin. */
export function withCorsHeaders(policy: CorsPolicy, handler: Handler): Handler {
  return async (request, context) => {
    const response = await handler(request, context);
    const headers = policy.headersFor(request.headers.get("Origin"));
    if (headers !== null) {
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    }
    return response;
  };
}

/** The OPTIONS handler of a route under `policy`, serving the methods of `handlers`. */
export function corsPreflight(policy: CorsPolicy, handlers: MethodHandlers): Handler {
  const methods = allowedMethods(handlers).split(", ").filter((m) => m !== "OPTIONS").join(", ");
  return async (request) => {
    await request.body?.cancel();
    return policy.preflight(request.headers.get("Origin"), methods);
  };
}
