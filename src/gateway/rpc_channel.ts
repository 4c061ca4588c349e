// What the upstream client asks of a transport (Streamable HTTP or a stdio child): send one
// JSON-RPC request and get its answer, with the notifications that come before it; send a
// notification; say when the peer's state was lost. The transports share the reading of what
// the upstream writes, which is here.
import * as v from "valibot";
import { ErrorObjectSchema, JSONRPC_VERSION, type RequestId } from "../mcp/messages.ts";
import { METHOD_NOT_FOUND } from "../mcp/errors.ts";
import { UpstreamError } from "./mcp_client.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import type { TraceCarrier } from "../tracing/tracing.ts";

/** A request's answer: its result object, or the JSON-RPC error the upstream sent instead. */
export type RpcOutcome =
  | { readonly result: Record<string, unknown> }
  | { readonly error: v.InferOutput<typeof ErrorObjectSchema> };

export interface RpcCall {
  readonly id: number;
  readonly method: string;
  readonly params: Record<string, unknown>;
  /** The revision spoken; null while the legacy handshake has not settled one. */
  readonly version: string | null;
  /** Aborted on cancellation or at the call's deadline; its reason is the UpstreamError. */
  readonly signal: AbortSignal;
  /** Each notification the upstream sends about this request (progress, list changes). */
  readonly onNotification: (method: string, params: Record<string, unknown>) => void;
  /** The client span's trace context, sent as `traceparent` over HTTP (tracing on only). */
  readonly trace?: TraceCarrier | null;
}

export interface RpcChannel {
  /**
   * Changes whenever what the upstream knew of us is gone (a new child, a lost or refused
   * HTTP session, a connection that failed): the handshake is due again.
   */
  readonly epoch: number;
  /** Ready to send (a stdio child started, after its restart back-off); no-op over HTTP. */
  open(signal: AbortSignal): Promise<void>;
  /** Open now: `open` has nothing to do (always over HTTP; while its child runs over stdio). */
  readonly ready: boolean;
  request(call: RpcCall): Promise<RpcOutcome>;
  notify(method: string, params: Record<string, unknown>, version: string | null): Promise<void>;
  /** Tells the upstream a request is abandoned, the way its transport and revision expect. */
  cancel(call: RpcCall, reason: string): Promise<void>;
  close(): Promise<void>;
}

/** The upstream no longer knows our session (HTTP 404, or a refused session id): re-handshake. */
export class SessionGoneError extends Error {
  override name = "SessionGoneError";
}

/** One message the upstream wrote, as the client reads it. */
export type Incoming =
  | { readonly kind: "response"; readonly id: RequestId | null; readonly outcome: RpcOutcome }
  | {
    readonly kind: "notification";
    readonly method: string;
    readonly params: Record<string, unknown>;
  }
  /** Sampling, elicitation, roots…: requests the gateway cannot serve. */
  | { readonly kind: "request"; readonly id: RequestId; readonly method: string }
  | { readonly kind: "invalid"; readonly problem: string };

const IncomingSchema = v.union([
  v.object({
    jsonrpc: v.literal(JSONRPC_VERSION),
    id: v.nullable(v.union([v.number(), v.string()])),
    result: v.custom<Record<string, unknown>>(_isObject),
  }),
  v.object({
    jsonrpc: v.literal(JSONRPC_VERSION),
    // Express-based servers drop an undefined id from their error bodies altogether.
    id: v.nullish(v.union([v.number(), v.string()])),
    error: ErrorObjectSchema,
  }),
]);

/** Reads one JSON text the upstream wrote; never throws. */
export function readIncoming(text: string): Incoming {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "invalid", problem: "a message that is not valid JSON" };
  }
  if (!_isObject(value) || value["jsonrpc"] !== JSONRPC_VERSION) {
    return { kind: "invalid", problem: "a message that is not JSON-RPC 2.0" };
  }
  const method = value["method"];
  if (typeof method === "string") {
    const params = _isObject(value["params"]) ? value["params"] : {};
    const id = value["id"];
    if (typeof id === "string" || typeof id === "number") return { kind: "request", id, method };
    return { kind: "notification", method, params };
  }
  const parsed = v.safeParse(IncomingSchema, value);
  if (!parsed.success) {
    return { kind: "invalid", problem: "a JSON-RPC message that is neither a result nor an error" };
  }
  const outcome = "result" in parsed.output
    ? { result: parsed.output.result }
    : { error: parsed.output.error };
  return { kind: "response", id: parsed.output.id ?? null, outcome };
}

/** The answer to a request the upstream sent us: the gateway serves none (-32601). */
export function refusal(id: RequestId, method: string): string {
  return JSON.stringify({
    jsonrpc: JSONRPC_VERSION,
    id,
    error: {
      code: METHOD_NOT_FOUND,
      message: `The gateway does not support ${method} requests from an upstream server`,
    },
  });
}

/** The notification that abandons a request (MCP "Cancellation"). */
export function cancelledParams(id: number, reason: string): Record<string, unknown> {
  return { requestId: id, reason };
}

/** An answer past the upstream's cap, with the cap named. */
export function tooLarge(upstream: UpstreamConfig): UpstreamError {
  return new UpstreamError(
    "too_large",
    `${upstream.title} answered with more than ${upstream.maxResponseBytes} bytes, ` +
      "the most this upstream may send",
  );
}

/** The promise, or the signal's reason as soon as it aborts (the work goes on for others). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
