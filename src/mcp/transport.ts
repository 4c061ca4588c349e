// The HTTP side of the Streamable HTTP transport around the endpoint (endpoint.ts): the route
// entry of an MCP path with its origin check and 405, the transport's error answers (429, 503,
// a 4xx with a JSON-RPC body), the media types a request must name, and what an endpoint counts.
import { corsPreflight, type TrustedCorsPolicy, withCorsHeaders } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import { OUTAGE_RETRY_SECONDS } from "../http/request_log.ts";
import type { MethodHandlers } from "../http/router.ts";
import { countOf } from "../count_words.ts";
import { rpcError, TRANSPORT_ERROR } from "./errors.ts";
import type { RequestId, RpcError } from "./messages.ts";
import type { TaskMetricState } from "./tasks.ts";

/**
 * What an endpoint counts for the operator's metrics (src/operator/service_metrics.ts); without it
 * nothing is counted. Both are told bounded values only.
 */
export interface McpMetrics {
  /**
   * A request (it has an id): its method, or `other` for a method no MCP revision here knows;
   * for tools/call, the tool, or `other` for a name the catalogue does not have.
   */
  request(method: string, tool: string | undefined): void;
  /** A JSON-RPC error answered, by its code. */
  error(code: number): void;
  /** A task entered a state: created (working), or ended (src/mcp/tasks.ts). */
  task?(state: TaskMetricState): void;
}

export type HeaderMap = Readonly<Record<string, string>>;

export const JSON_HEADERS = Object.freeze({ "Content-Type": "application/json" });
export const SSE_HEADERS = Object.freeze({
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  // 2026-07-28 "Receiving Messages": proxies such as nginx must pass events on at once.
  "X-Accel-Buffering": "no",
});

/** A caller over its rate limit: 429 with Retry-After and a JSON-RPC error (id not read yet). */
export function tooManyRequests(seconds: number): Response {
  return errorResponse(
    429,
    rpcError(null, TRANSPORT_ERROR, `Too many requests: retry after ${countOf(seconds, "second")}`),
    { "Retry-After": String(seconds) },
  );
}

/**
 * The route entry of an MCP path: POST to `post` (authentication, then the endpoint), every
 * other method 405 with `Allow: POST, OPTIONS` and a JSON-RPC body, and CORS for trusted
 * origins. An `Origin` that is not trusted is refused with 403 before anything else, preflight
 * included: the transport's defence against DNS rebinding (MCP 2025-11-25 §"Security Warning").
 */
export function mcpRoute(
  post: Handler,
  cors: TrustedCorsPolicy,
  metrics?: McpMetrics | undefined,
): MethodHandlers {
  // Clients that are not browsers send no Origin (most calls): they skip the CORS layer.
  const byOrigin = (plain: Handler, browser: Handler): Handler => (request, context) => {
    const origin = request.headers.get("Origin");
    if (origin === null) return plain(request, context);
    if (!cors.allows(origin)) {
      metrics?.error(TRANSPORT_ERROR);
      return rejectRequest(
        request,
        403,
        `Forbidden: origin ${JSON.stringify(origin)} is not trusted`,
      );
    }
    return browser(request, context);
  };
  const preflight = corsPreflight(cors, { POST: post });
  return {
    POST: byOrigin(post, withCorsHeaders(cors, post)),
    OPTIONS: byOrigin(preflight, preflight),
    methodNotAllowed: (request, allow) => {
      metrics?.error(TRANSPORT_ERROR);
      return rejectRequest(
        request,
        405,
        `Method Not Allowed: ${request.method} is not supported; use POST`,
        { Allow: allow },
      );
    },
  };
}

/**
 * A store outage met by an MCP request: 503 with Retry-After (RFC 9110 §15.6.4), and the JSON-RPC
 * error of the request's id (null when it was not read yet, as during authentication).
 */
export function storeUnavailableResponse(id: RequestId | null): Response {
  return errorResponse(503, outageError(id), { "Retry-After": String(OUTAGE_RETRY_SECONDS) });
}

export function outageError(id: RequestId | null): RpcError {
  return rpcError(
    id,
    TRANSPORT_ERROR,
    `Service Unavailable: the store does not answer; retry after ${OUTAGE_RETRY_SECONDS} seconds`,
  );
}

/** A transport error: the unread body is cancelled, and the status carries a JSON-RPC error. */
export async function rejectRequest(
  request: Request,
  status: number,
  message: string,
  headers?: HeaderMap,
): Promise<Response> {
  await request.body?.cancel();
  return errorResponse(status, rpcError(null, TRANSPORT_ERROR, message), headers);
}

/** A JSON error response; the body is an RpcError, or its JSON text. */
export function errorResponse(
  status: number,
  body: RpcError | string,
  headers?: HeaderMap,
): Response {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Response(text, {
    status,
    headers: headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...headers },
  });
}

function _mediaType(value: string): string {
  return value.split(";", 1)[0]!.trim().toLowerCase();
}

export function isJsonMediaType(header: string | null): boolean {
  if (header === "application/json") return true;
  return header !== null && _mediaType(header) === "application/json";
}

/** MCP: the client must list both; wildcards do not count, the two types must be named. */
export function acceptsJsonAndSse(header: string | null): boolean {
  if (header === null) return false;
  if (header === "application/json, text/event-stream") return true; // what SDK clients send
  const types = header.split(",").map(_mediaType);
  return types.includes("application/json") && types.includes("text/event-stream");
}
