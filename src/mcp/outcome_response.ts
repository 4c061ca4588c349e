// A dispatch outcome as the endpoint's HTTP response: a reply as JSON (or as one SSE event where
// the endpoint always answers so), with the statuses 2026-07-28 gives its errors; a stream as an
// event stream, kept alive while it has nothing to send, its notifications as they come and its
// response last, and a store outage in it said in the stream.
import { describeError, logEvent, logOutage, type LogSink } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import type { Tracing } from "../tracing/tracing.ts";
import { METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, TRANSPORT_ERROR } from "./errors.ts";
import type { JsonRpcRequest } from "./messages.ts";
import type { Outcome } from "./outcomes.ts";
import { createSseEncoder, encodeSseEvent, SSE_KEEPALIVE } from "./sse.ts";
import {
  errorResponse,
  JSON_HEADERS,
  type McpMetrics,
  outageError,
  SSE_HEADERS,
} from "./transport.ts";

/** How often an event stream that has nothing to send says it is alive (a comment). */
const KEEPALIVE_MS = 15_000;

export interface ResponderOptions {
  /** VESTIBULE_MCP_RESPONSE=sse: every answer an event stream. */
  readonly alwaysSse: boolean;
  readonly log: LogSink;
  readonly metrics?: McpMetrics | undefined;
  readonly tracing: Tracing;
}

export type Respond = (outcome: Outcome, request: JsonRpcRequest, modern: boolean) => Response;

export function createResponder(options: ResponderOptions): Respond {
  const { alwaysSse, log, metrics, tracing } = options;
  return (outcome, request, modern) => {
    if (outcome.kind === "reply") {
      if (outcome.errorCode !== undefined) {
        metrics?.error(outcome.errorCode);
        _annotateError(tracing, outcome.errorCode);
      }
      // 2026-07-28 "Protocol Version Header": an unknown method is 404 with its JSON-RPC error.
      if (modern && outcome.errorCode === METHOD_NOT_FOUND) {
        return errorResponse(404, outcome.body);
      }
      // 2026-07-28 "Capabilities": a capability the request did not declare is 400.
      if (modern && outcome.errorCode === MISSING_REQUIRED_CLIENT_CAPABILITY) {
        return errorResponse(400, outcome.body);
      }
      if (!alwaysSse) return new Response(outcome.body, { headers: JSON_HEADERS });
      return new Response(encodeSseEvent(outcome.body), { headers: SSE_HEADERS });
    }
    const sse = createSseEncoder();
    const writer = sse.writable.getWriter();
    let open = true;
    // A client that goes away mid-stream only stops the notifications; the tool finishes.
    const send = async (message: string) => {
      if (!open) return;
      try {
        await writer.write(message);
      } catch {
        open = false;
      }
    };
    const keepAlive = setInterval(() => void send(SSE_KEEPALIVE), KEEPALIVE_MS);
    // run() turns tool failures into JSON-RPC errors itself, but for a store outage; anything
    // else escaping it is a bug, which ends the stream rather than the process.
    outcome.run(send).then((reply) => {
      if (reply.errorCode !== undefined) metrics?.error(reply.errorCode);
      return send(reply.body);
    }, (error: unknown) => {
      if (error instanceof StoreUnavailableError) {
        // The 200 and the notifications are sent: the response can only say it in the stream.
        logOutage(log, error, { method: request.method });
        metrics?.error(TRANSPORT_ERROR);
        return send(JSON.stringify(outageError(request.id)));
      }
      logEvent(log, { level: "error", message: "MCP stream failed", ...describeError(error) });
    }).finally(() => {
      clearInterval(keepAlive);
      if (open) writer.close().catch(() => {});
    });
    return new Response(sse.readable, { headers: SSE_HEADERS });
  };
}

/** A JSON-RPC error answered: its code is the span's `error.type` (MCP conventions). */
function _annotateError(tracing: Tracing, code: number): void {
  const type = String(code);
  tracing.annotate({ "error.type": type, "rpc.response.status_code": type }, type);
}
