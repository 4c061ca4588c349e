// The endpoint the endpoint tests post to, in process: a router around an MCP endpoint over
// the test tools, and the requests and error bodies those tests share.
import assert from "node:assert/strict";
import { createCorsPolicies } from "../../src/http/cors.ts";
import { createRouter } from "../../src/http/router.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { type RateLimiter, UNLIMITED } from "../../src/http/rate_limiter.ts";
import { createMcpEndpoint } from "../../src/mcp/endpoint.ts";
import { type McpMetrics, mcpRoute } from "../../src/mcp/transport.ts";
import type { AnyTool } from "../../src/mcp/tool.ts";
import { TEST_TOOLS } from "./fixtures.ts";

const ORIGIN = "http://127.0.0.1:9101";
const URL_ = `${ORIGIN}/mcp`;

export function setup(
  options: {
    sse?: boolean;
    rateLimiter?: RateLimiter;
    maxBodyBytes?: number;
    refuse?: boolean;
    metrics?: McpMetrics;
    tools?: readonly AnyTool<string>[];
  } = {},
) {
  const config = resolveConfig({
    VESTIBULE_BASE_URL: "http://127.0.0.1:9100",
    VESTIBULE_AUTH_URL: ORIGIN,
    VESTIBULE_API_URL: "http://127.0.0.1:9102",
    VESTIBULE_TRUSTED_ORIGINS: "https://app.example.com",
    VESTIBULE_MCP_RESPONSE: options.sse ? "sse" : "json",
    VESTIBULE_MCP_PAGE_SIZE: "2",
  });
  const endpoint = createMcpEndpoint<string>({
    tools: options.tools ?? TEST_TOOLS,
    config,
    maxBodyBytes: options.maxBodyBytes ?? 1024,
    rateLimiter: options.rateLimiter ?? UNLIMITED,
    serverInfo: { name: "t", title: "T", version: "1" },
    instructions: "i",
    cacheScope: "public",
    log: () => {},
    metrics: options.metrics,
    access: {
      authenticate: (_request, context) =>
        Promise.resolve({ auth: "alice", rateKey: context.clientAddress }),
      ...(options.refuse
        ? {
          mayCall: (tool: { name: string }, auth: string) =>
            tool.name === "echo" && auth === "alice"
              ? new Response("step up", { status: 403 })
              : undefined,
        }
        : {}),
    },
  });
  const router = createRouter({
    [new URL(URL_).pathname]: mcpRoute(
      endpoint,
      createCorsPolicies(config.trustedOrigins).mcp,
      options.metrics,
    ),
  });
  const context = { clientAddress: "192.0.2.1" };
  return (init: RequestInit) => router(new Request(URL_, { method: "POST", ...init }), context);
}

export const HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};

export function post(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

export const PING = { jsonrpc: "2.0", id: 1, method: "ping" };

export async function rpcError(response: Response) {
  assert.equal(response.headers.get("Content-Type"), "application/json");
  const body = await response.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(typeof body.error.code, "number");
  return body;
}
