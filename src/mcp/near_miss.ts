/**
 * An MCP client pointed at a path that is almost an MCP endpoint ({api_url}/mcp,
 * {base_url}/api/mcp, {api_url}/api/mcp/, {auth_url}/MCP, …) gets a JSON-RPC 404 that names both
 * endpoints, which the client shows its user, instead of a bare "Not found". Any method: a client
 * opening its stream sends GET.
 */
import type { Config } from "../config/config.ts";
import type { Handler } from "../http/handler.ts";
import { pathOf } from "../http/url_path.ts";
import { INVALID_REQUEST, rpcError } from "./errors.ts";

/** Paths an MCP client is likely to be given by mistake, lower case, without trailing slash. */
const NEAR_MISSES = new Set([
  "/mcp",
  "/api/mcp",
  "/v1/mcp",
  "/mcp/v1",
  "/sse",
  "/mcp/sse",
  "/api/mcp/sse",
  "/api/sse",
]);

/** `fallback` answers every unknown path that is not a near miss. */
export function withMcpNearMiss(
  config: Pick<Config, "authUrl" | "apiUrl">,
  fallback: Handler,
): Handler {
  const workspace = `${config.apiUrl}/api/mcp`;
  const onboarding = `${config.authUrl}/mcp`;
  const body = JSON.stringify(rpcError(
    null,
    INVALID_REQUEST,
    `No MCP endpoint here: the workspace endpoint is ${workspace} (the onboarding one is ${onboarding})`,
    { workspaceEndpoint: workspace, onboardingEndpoint: onboarding },
  ));
  return async (request, context) => {
    if (!NEAR_MISSES.has(_normalized(pathOf(request.url)))) return fallback(request, context);
    await request.body?.cancel();
    return new Response(body, {
      status: 404,
      headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
    });
  };
}

function _normalized(path: string): string {
  return path.toLowerCase().replace(/\/+$/, "") || "/";
}
