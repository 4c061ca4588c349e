/** Headers browsers may read from our responses: the challenges MCP clients need. */
const EXPOSED = "WWW-Authenticate, Retry-After, Mcp-Session-Id, MCP-Protocol-Version";

/** CORS for public, credential-free reads: any origin. */
export const PUBLIC_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": EXPOSED,
});

/** Answers a preflight for public reads and credential-free endpoints. */
export function publicPreflight(
  allowMethods: string,
  allowHeaders = "Content-Type, Authorization",
): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": allowMethods,
      "Access-Control-Allow-Headers": allowHeaders,
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
