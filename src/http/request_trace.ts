import type { Handler } from "./handler.ts";
import { UNMATCHED_ROUTE } from "./request_log.ts";
import { pathOf } from "./url_path.ts";
import type { Tracing } from "../tracing/tracing.ts";

/**
 * A server span per request on each origin, named `{method} {route}` as OpenTelemetry's HTTP
 * conventions say, continuing the caller's `traceparent` as its parent. Wrapped around the
 * request log, so its line carries the span's ids. Only when tracing is on (app.ts): with it off
 * the handler is served unwrapped. The path is the request log's (no query: queries may carry
 * codes); no header, body or client address is recorded.
 */
export function withRequestTrace(handler: Handler, tracing: Tracing): Handler {
  return (request, context) => {
    const headers = request.headers;
    return tracing.span(request.method, {
      kind: "server",
      parent: {
        traceparent: headers.get("traceparent") ?? undefined,
        tracestate: headers.get("tracestate") ?? undefined,
      },
      attributes: {
        "http.request.method": request.method,
        "url.scheme": request.url.startsWith("https:") ? "https" : "http",
        "url.path": pathOf(request.url),
        "server.address": headers.get("Host") ?? undefined,
        "network.protocol.name": "http",
      },
    }, async (span) => {
      const response = await handler(request, context);
      const route = context.route ?? UNMATCHED_ROUTE;
      span.rename(`${request.method} ${route}`);
      span.set({ "http.route": route, "http.response.status_code": response.status });
      if (response.status >= 500) span.fail(String(response.status));
      return response;
    });
  };
}
