import type { Handler } from "./handler.ts";
import { jsonResponse, textResponse } from "./responses.ts";
import { pathOf } from "./url_path.ts";

/** One configured origin and the surface that answers for it. */
export interface Site {
  readonly origin: string;
  readonly handler: Handler;
}

const MCP_PATHS = new Set(["/mcp", "/api/mcp"]);

/**
 * Routes by the Host header among the configured origins (never trusting Host for anything
 * else). An unknown Host is 421 Misdirected Request on site routes (RFC 9110 §15.5.20) and
 * 403 on the MCP routes, where it is the DNS-rebinding defence the MCP transport requires.
 */
export function createHostRouter(sites: readonly Site[]): Handler {
  const byHost = new Map<string, Handler>();
  for (const site of sites) {
    const url = new URL(site.origin);
    byHost.set(url.host.toLowerCase(), site.handler);
    // Clients may omit the default port from Host.
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    byHost.set(`${url.hostname}:${port}`.toLowerCase(), site.handler);
  }
  return (request, context) => {
    const handler = byHost.get(request.headers.get("Host")?.toLowerCase() ?? "");
    return handler ? handler(request, context) : _misdirected(request);
  };
}

async function _misdirected(request: Request): Promise<Response> {
  const host = request.headers.get("Host")?.toLowerCase() ?? "";
  await request.body?.cancel();
  if (MCP_PATHS.has(pathOf(request.url))) {
    return jsonResponse({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: `Host ${JSON.stringify(host)} is not served here` },
    }, { status: 403 });
  }
  return textResponse(`Misdirected request: host ${JSON.stringify(host)} is not served here\n`, {
    status: 421,
  });
}
