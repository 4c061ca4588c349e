// The upstream client's Streamable HTTP transport: each JSON-RPC message one POST, answered by
// JSON or by an event stream read as it arrives (progress is delivered before the answer);
// the legacy session id kept and sent; every body counted against the upstream's cap.
import type { LogSink } from "../http/request_log.ts";
import { readCapped } from "../http/body.ts";
import { JSONRPC_VERSION, type RequestId } from "../mcp/messages.ts";
import { encodeHeaderValue } from "../mcp/negotiation.ts";
import { createSseParser } from "../mcp/sse.ts";
import { MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import { UpstreamError } from "./mcp_client.ts";
import { deadlines } from "../deadlines.ts";
import { parseBearerChallenge, scopeTokens } from "./connect/discovery.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import {
  cancelledParams,
  type Incoming,
  readIncoming,
  refusal,
  type RpcCall,
  type RpcChannel,
  type RpcOutcome,
  SessionGoneError,
  tooLarge,
} from "./rpc_channel.ts";

/**
 * What the transport needs of fetch: the global one, or src/gateway/http1.ts's keep-alive
 * client, which implements only this much. Header names are in lower case, one entry each.
 */
export type UpstreamFetch = (
  url: string,
  init: {
    readonly method: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: string;
    readonly signal: AbortSignal;
    /** Whose connections may carry it (http1.ts `Http1Init.pool`); fetch ignores it. */
    readonly pool?: string;
    /** It may be sent twice, if a reused connection failed before any answer byte. */
    readonly idempotent?: boolean;
  },
) => Promise<Response>;

export interface HttpChannelDeps {
  readonly fetch: UpstreamFetch;
  readonly log: LogSink;
}

/** The transport's own request headers, which the operator's cannot set (lower case). */
const PROTOCOL_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "accept",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "mcp-session-id",
]);

/** Methods whose `params.name` the `Mcp-Name` header mirrors (2026-07-28 "Request Metadata"). */
const NAMED_METHODS = new Set(["tools/call", "prompts/get"]);

/**
 * Requests that change nothing at the upstream, which its HTTP client may send again on a new
 * connection; never tools/call (RFC 9110 §9.2.2: a POST is not idempotent).
 */
const IDEMPOTENT_METHODS = new Set(["initialize", "server/discover", "tools/list", "ping"]);

/** Requests an upstream may send on one call's event stream; each costs the upstream a POST. */
const MAX_REQUESTS_PER_CALL = 16;

/** How long the rest of an event stream is read after its answer, to keep its connection. */
const DRAIN_MS = 100;

/** A whole JSON body's text; one decoder for every call (it keeps no state between them). */
const utf8 = new TextDecoder();
/** An event stream's decoding options, one object for every chunk. */
const STREAMING: TextDecodeOptions = { stream: true };

/** Statuses of a gateway in front of the upstream that could not reach it. */
const UNREACHABLE_STATUSES = new Set([502, 503, 504]);

export function createHttpChannel(
  upstream: UpstreamConfig,
  url: string,
  operatorHeaders: Readonly<Record<string, string>>,
  deps: HttpChannelDeps,
): RpcChannel {
  const { title, maxResponseBytes } = upstream;
  let sessionId: string | null = null;
  let epoch = 0;

  const forget = () => {
    sessionId = null;
    epoch++;
  };

  const operator = _operatorHeaders(operatorHeaders);
  // A plain record per request: a Headers object, filled and then iterated by the client, cost
  // more than the rest of the request's head together.
  const headersFor = (method: string | null, name: unknown, version: string | null) => {
    const headers: Record<string, string> = {
      ...operator,
      "content-type": "application/json",
      "accept": "application/json, text/event-stream",
    };
    if (version !== null) headers["mcp-protocol-version"] = version;
    if (version === MODERN_PROTOCOL_VERSION && method !== null) {
      headers["mcp-method"] = method;
      if (NAMED_METHODS.has(method) && typeof name === "string") {
        headers["mcp-name"] = encodeHeaderValue(name);
      }
    } else if (sessionId !== null) {
      headers["mcp-session-id"] = sessionId;
    }
    return headers;
  };

  const post = async (
    body: string,
    headers: Readonly<Record<string, string>>,
    signal: AbortSignal,
    idempotent = false,
  ): Promise<Response> => {
    try {
      return await deps.fetch(url, { method: "POST", headers, body, signal, idempotent });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      forget();
      throw unreachable(title, error);
    }
  };

  /** Fire and forget: a message the upstream may or may not take (refusals, cancellations). */
  const postQuietly = (body: string, version: string | null, method: string | null) => {
    const signal = AbortSignal.timeout(upstream.timeoutMs);
    deps.fetch(url, {
      method: "POST",
      headers: headersFor(method, undefined, version),
      body,
      signal,
    })
      .then((response) => response.body?.cancel())
      .catch(() => {});
  };

  /** A request the upstream sent on a call's stream, refused before the stream is read on. */
  const refuse = async (id: RequestId, method: string, call: RpcCall) => {
    try {
      const response = await deps.fetch(url, {
        method: "POST",
        headers: headersFor(null, undefined, call.version),
        body: refusal(id, method),
        signal: call.signal,
      });
      await response.body?.cancel();
    } catch {
      // The upstream may go on without it; the call's own answer still decides.
    }
  };

  const readJson = async (response: Response, call: RpcCall): Promise<Incoming> => {
    const body = await readCapped(response, maxResponseBytes);
    if (!body.ok) {
      if (body.problem === "too-large") throw tooLarge(upstream);
      if (call.signal.aborted) throw call.signal.reason;
      forget();
      throw new UpstreamError("unreachable", `${title} is unreachable: its answer broke off`);
    }
    return readIncoming(utf8.decode(body.bytes));
  };

  /**
   * An event stream read chunk by chunk as it arrives (progress reaches the agent before the
   * answer), straight from the body's reader into a synchronous parser: no stream transforms.
   */
  const readStream = async (response: Response, call: RpcCall): Promise<RpcOutcome> => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const parse = createSseParser();
    let bytes = 0;
    let asked = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          throw new UpstreamError(
            "protocol",
            `${title} ended its event stream without answering ${call.method}`,
          );
        }
        bytes += value.byteLength;
        if (bytes > maxResponseBytes) throw tooLarge(upstream);
        for (const data of parse(decoder.decode(value, STREAMING))) {
          // An event without data primes a resumable stream (server-everything sends one first).
          if (data === "") continue;
          const message = readIncoming(data);
          switch (message.kind) {
            case "response": {
              const outcome = answerTo(message, call, false);
              void _drain(reader, maxResponseBytes - bytes);
              return outcome;
            }
            case "notification":
              call.onNotification(message.method, message.params);
              break;
            case "request":
              // MCP 2025-11-25 lets a server ask the client things on this stream (sampling,
              // elicitation, roots); the gateway has no one to ask. Each refusal is one POST, so
              // a call gets a few, one at a time, and then ends.
              if (++asked > MAX_REQUESTS_PER_CALL) {
                throw new UpstreamError(
                  "protocol",
                  `${title} sent more than ${MAX_REQUESTS_PER_CALL} requests to the client ` +
                    `during ${call.method}; the gateway serves none, and ended the call`,
                );
              }
              await refuse(message.id, message.method, call);
              break;
            case "invalid":
              throw new UpstreamError("protocol", `${title} sent ${message.problem}`);
          }
        }
      }
    } catch (error) {
      reader.cancel().catch(() => {});
      if (error instanceof UpstreamError) throw error;
      if (call.signal.aborted) throw call.signal.reason;
      forget();
      throw new UpstreamError("unreachable", `${title} is unreachable: its answer broke off`);
    }
  };

  /**
   * A 403 whose Bearer challenge says `insufficient_scope` (RFC 6750 §3.1, MCP "Scope Challenge
   * Handling"): the token lacks a permission, whatever the body says. Other 403s read on.
   */
  const refusedScope = async (response: Response, method: string) => {
    const bearer = parseBearerChallenge(response.headers.get("WWW-Authenticate"));
    if (bearer?.error !== "insufficient_scope") return;
    await response.body?.cancel();
    const scopes = scopeTokens(bearer.scope);
    const which = scopes.length === 0 ? "" : ` (${scopes.join(" ")})`;
    throw new UpstreamError(
      "insufficient_scope",
      `${title} refused ${method}: its sign-in lacks a permission the call needs${which} (HTTP 403 insufficient_scope)`,
      null,
      scopes,
    );
  };

  /** `refusedPost`: the answer came with an HTTP error status, which refuses this POST itself. */
  const answerTo = (message: Incoming, call: RpcCall, refusedPost: boolean): RpcOutcome => {
    if (message.kind === "invalid") {
      throw new UpstreamError(
        "protocol",
        `${title} answered ${call.method} with ${message.problem}`,
      );
    }
    if (message.kind !== "response") {
      throw new UpstreamError(
        "protocol",
        `${title} answered ${call.method} with a ${message.kind} instead of a response`,
      );
    }
    // An error about a request whose id the server could not read carries a null id, with an
    // HTTP error status (Streamable HTTP "Sending Messages to the Server"); anywhere else a null
    // id could be another request's answer, and another caller's data.
    if (
      message.id !== call.id && !(message.id === null && refusedPost && "error" in message.outcome)
    ) {
      throw new UpstreamError(
        "protocol",
        message.id === null
          ? `${title} answered ${call.method} with an error that names no request`
          : `${title} answered ${call.method} with the id of another request`,
      );
    }
    return message.outcome;
  };

  return {
    get epoch() {
      return epoch;
    },
    open: () => Promise.resolve(),
    ready: true,

    async request(call) {
      const sent = sessionId !== null && call.version !== MODERN_PROTOCOL_VERSION;
      const body = JSON.stringify({
        jsonrpc: JSONRPC_VERSION,
        id: call.id,
        method: call.method,
        params: call.params,
      });
      const headers = headersFor(call.method, call.params["name"], call.version);
      // W3C Trace Context: the upstream's span is a child of our client span.
      if (call.trace?.traceparent) headers["traceparent"] = call.trace.traceparent;
      if (call.trace?.tracestate) headers["tracestate"] = call.trace.tracestate;
      const response = await post(body, headers, call.signal, IDEMPOTENT_METHODS.has(call.method));
      if (call.method === "initialize") sessionId = response.headers.get("Mcp-Session-Id");
      const type = response.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
      if (response.status === 401) {
        // Its own sign-in (a person's token expired, or it wants one): never a session problem.
        await response.body?.cancel();
        throw new UpstreamError(
          "unauthorized",
          `${title} refused the credentials of ${call.method} (HTTP 401)`,
          response.headers.get("WWW-Authenticate"),
        );
      }
      if (response.status === 403) await refusedScope(response, call.method);
      if (sent && response.status === 404) {
        await response.body?.cancel();
        forget();
        throw new SessionGoneError();
      }
      if (response.ok && type === "text/event-stream") return await readStream(response, call);
      if (type === "application/json") {
        const message = await readJson(response, call);
        if (
          sent && response.status === 400 && message.kind === "response" &&
          "error" in message.outcome
        ) {
          // A legacy server that lost our session may say so with 400 instead of 404: the
          // official server-everything answers "Bad Request: No valid session ID provided"
          // after a restart. A fresh session is worth one try.
          forget();
          throw new SessionGoneError();
        }
        return answerTo(message, call, !response.ok);
      }
      await response.body?.cancel();
      if (UNREACHABLE_STATUSES.has(response.status)) {
        forget();
        throw new UpstreamError(
          "unreachable",
          `${title} is unreachable: its address answered HTTP ${response.status}`,
        );
      }
      throw new UpstreamError(
        "protocol",
        response.ok
          ? `${title} answered ${call.method} with neither JSON nor an event stream`
          : `${title} answered ${call.method} with HTTP ${response.status}`,
      );
    },

    async notify(method, params, version) {
      const body = JSON.stringify({ jsonrpc: JSONRPC_VERSION, method, params });
      const signal = AbortSignal.timeout(upstream.timeoutMs);
      const response = await post(body, headersFor(method, undefined, version), signal);
      await response.body?.cancel();
      if (!response.ok) {
        throw new UpstreamError(
          "protocol",
          `${title} refused the ${method} notification with HTTP ${response.status}`,
        );
      }
    },

    cancel(call, reason) {
      // 2026-07-28 "Cancellation": over HTTP, closing the response stream (the aborted fetch)
      // is the signal, and no notification is expected. A legacy session is told.
      if (call.version !== MODERN_PROTOCOL_VERSION) {
        const body = JSON.stringify({
          jsonrpc: JSONRPC_VERSION,
          method: "notifications/cancelled",
          params: cancelledParams(call.id, reason),
        });
        postQuietly(body, call.version, "notifications/cancelled");
      }
      return Promise.resolve();
    },

    async close() {
      if (sessionId === null) return;
      const headers = headersFor(null, undefined, null);
      sessionId = null;
      try {
        const response = await deps.fetch(url, {
          method: "DELETE",
          headers,
          signal: AbortSignal.timeout(upstream.timeoutMs),
        });
        await response.body?.cancel();
      } catch {
        // The session ends with the upstream anyway; nothing to do about a failed goodbye.
      }
    },
  };
}

/** A failed connection in plain words; the fetch error's text names the URL, so it stays out. */
export function unreachable(title: string, error: unknown): UpstreamError {
  // Deno's fetch says "fetch failed" and keeps the reason in `cause`.
  const cause = error instanceof Error ? error.cause : undefined;
  const text = [error, cause].map((part) => part instanceof Error ? part.message : "").join(" ");
  const why = /refused/i.test(text)
    ? "the connection was refused"
    : /reset|broken pipe|closed/i.test(text)
    ? "the connection was reset"
    : /dns|lookup|resolve/i.test(text)
    ? "its host name did not resolve"
    : "the connection failed";
  return new UpstreamError("unreachable", `${title} is unreachable: ${why}`);
}

/**
 * After the answer, the rest of its event stream (its end, as a rule, already on the way) is read
 * and dropped without holding up the answer, so that the keep-alive client may give the
 * connection to another call once its framing ended cleanly; a stream still open after
 * DRAIN_MS (one of the shared deadlines: no timer a call), or longer than the cap, is cancelled and
 * its connection closed.
 */
async function _drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  bytesLeft: number,
): Promise<void> {
  const cut = () => void reader.cancel().catch(() => {});
  const deadline = deadlines.after(DRAIN_MS, cut);
  try {
    for (let left = bytesLeft;;) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
      if (left < 0) return cut();
    }
  } catch {
    // Cut, or broken off: its connection is closed either way.
  } finally {
    deadline.clear();
  }
}

/**
 * The upstreams file's headers as Headers would hold them (names in lower case, values trimmed,
 * two spellings of one name joined), less the protocol's own: those the transport sets, never the
 * operator.
 */
function _operatorHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (PROTOCOL_HEADERS.has(lower)) continue;
    const trimmed = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    joined[lower] = lower in joined ? `${joined[lower]}, ${trimmed}` : trimmed;
  }
  return joined;
}
