// What dispatch works with besides the message: the context a request is dispatched in, and the
// outcomes it answers with (a JSON-RPC response as JSON text, or a stream of notifications that
// ends with one; a failure as its error response; the fields a 2026-07-28 result carries
// besides its own).
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { encodeMessage } from "./codec.ts";
import { INTERNAL_ERROR, JsonRpcError, rpcError } from "./errors.ts";
import { type JsonRpcRequest, META } from "./messages.ts";
import type { ToolRegistry } from "./registry.ts";
import type { ProtocolVersion } from "./versions.ts";

/** What a request is dispatched with besides its message. */
export interface DispatchContext<A> {
  readonly auth: A;
  readonly version: ProtocolVersion;
  /** The caller's catalogue (the same for every caller where tools do not depend on who asks). */
  readonly registry: ToolRegistry<A>;
  /** A tool call's: aborted when the caller cancels it or goes away (no other request reads it). */
  readonly signal: AbortSignal;
}

/** Writes one JSON-RPC message (JSON text) to a stream that is already open. */
export type Send = (message: string) => Promise<void>;

/** One JSON-RPC response, as JSON text; `errorCode` when it is an error response. */
export interface Reply {
  readonly kind: "reply";
  readonly body: string;
  readonly errorCode?: number;
}

export type Outcome =
  | Reply
  /**
   * Notifications first, then the response: `run` sends the notifications as they happen and
   * resolves with the response.
   */
  | { readonly kind: "stream"; readonly run: (send: Send) => Promise<Reply> };

export function reply(body: string): Reply {
  return { kind: "reply", body };
}

/**
 * A failure as its error response: a JsonRpcError as it is, anything else -32603 and an error
 * line for the operator. A store that does not answer is rethrown: it is the operator's outage,
 * not a protocol error, and the transport answers it (HTTP 503).
 */
export function errorReply(log: LogSink, request: JsonRpcRequest, error: unknown): Reply {
  if (error instanceof StoreUnavailableError) throw error;
  let known: JsonRpcError;
  if (error instanceof JsonRpcError) {
    known = error;
  } else {
    logEvent(log, {
      level: "error",
      message: "MCP request failed",
      method: request.method,
      ...describeError(error),
    });
    known = new JsonRpcError(INTERNAL_ERROR, "Internal error");
  }
  return {
    kind: "reply",
    body: encodeMessage(rpcError(request.id, known.code, known.message, known.data)),
    errorCode: known.code,
  };
}

/** 2026-07-28 "General fields": every result names its type and, as a SHOULD, its server. */
export class ModernResults {
  readonly #meta: Readonly<Record<string, unknown>>;

  constructor(serverInfo: object) {
    this.#meta = { [META.serverInfo]: serverInfo };
  }

  /** A result of ours. */
  of<R extends object>(result: R) {
    return { resultType: "complete" as const, ...result, _meta: this.#meta };
  }

  /** An upstream's result, passed on as it came: its own `_meta` keys stay beside ours. */
  forwarded(result: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const own = result["_meta"];
    const meta = typeof own === "object" && own !== null ? { ...own, ...this.#meta } : this.#meta;
    return { resultType: "complete", ...result, _meta: meta };
  }
}
