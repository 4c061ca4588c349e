/** Headers browsers may read from our responses: the challenges MCP clients need. */
const EXPOSED = "WWW-Authenticate, Retry-After, Mcp-Session-Id, MCP-Protocol-Version";

/** CORS for public, credential-free reads: any origin. */
export const PUBLIC_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": EXPOSED,
});

/**
 * Request headers a credential-free answer accepts: any. Nothing rides on these requests that a
 * header could misuse, and MCP clients add their own (MCP-Protocol-Version on discovery). `*`
 * is the Fetch standard's wildcard for requests without credentials, the only kind these
 * answers allow; it never covers Authorization, hence the name beside it.
 */
const ANY_REQUEST_HEADER = "*, Authorization";

/** Answers a preflight for public reads and credential-free endpoints. */
export function publicPreflight(allowMethods: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": allowMethods,
      "Access-Control-Allow-Headers": ANY_REQUEST_HEADER,
      "Access-Control-Max-Age": "600",
    },
  });
}

/** CORS headers for a response to a trusted browser origin (no credentials). */
export function trustedOriginHeaders(origin: string): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Expose-Headers": EXPOSED,
    "Vary": "Origin",
  };
}
