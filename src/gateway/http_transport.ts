// The upstream client's Streamable HTTP transport: each JSON-RPC message one POST (its session
// and headers: http_session.ts), answered by JSON or by an event stream read as it arrives
// (http_answers.ts); what each HTTP status means for the call.
import { JSONRPC_VERSION } from "../mcp/messages.ts";
import { MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import { answerTo, readJson, readStream, refusedScope } from "./http_answers.ts";
import { HttpSession, type UpstreamFetch } from "./http_session.ts";
import { UpstreamError } from "./mcp_client.ts";
import { cancelledParams, type RpcChannel, SessionGoneError } from "./rpc_channel.ts";

/**
 * Requests that change nothing at the upstream, which its HTTP client may send again on a new
 * connection; never tools/call (RFC 9110 §9.2.2: a POST is not idempotent).
 */
const IDEMPOTENT_METHODS = new Set(["initialize", "server/discover", "tools/list", "ping"]);

/** Statuses of a gateway in front of the upstream that could not reach it. */
const UNREACHABLE_STATUSES = new Set([502, 503, 504]);

export function createHttpChannel(
  upstream: UpstreamConfig,
  url: string,
  operatorHeaders: Readonly<Record<string, string>>,
  fetch: UpstreamFetch,
): RpcChannel {
  const { title } = upstream;
  const session = new HttpSession(upstream, url, operatorHeaders, fetch);

  return {
    get epoch() {
      return session.epoch;
    },
    open: () => Promise.resolve(),
    ready: true,

    async request(call) {
      const sent = session.id !== null && call.version !== MODERN_PROTOCOL_VERSION;
      const body = JSON.stringify({
        jsonrpc: JSONRPC_VERSION,
        id: call.id,
        method: call.method,
        params: call.params,
      });
      const headers = session.headersFor(call.method, call.params["name"], call.version);
      // W3C Trace Context: the upstream's span is a child of our client span.
      if (call.trace?.traceparent) headers["traceparent"] = call.trace.traceparent;
      if (call.trace?.tracestate) headers["tracestate"] = call.trace.tracestate;
      const idempotent = IDEMPOTENT_METHODS.has(call.method);
      const response = await session.post(body, headers, call.signal, idempotent);
      if (call.method === "initialize") session.id = response.headers.get("Mcp-Session-Id");
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
      if (response.status === 403) await refusedScope(title, response, call.method);
      if (sent && response.status === 404) {
        await response.body?.cancel();
        session.forget();
        throw new SessionGoneError();
      }
      if (response.ok && type === "text/event-stream") {
        return await readStream(session, response, call);
      }
      if (type === "application/json") {
        const message = await readJson(session, response, call);
        if (
          sent && response.status === 400 && message.kind === "response" &&
          "error" in message.outcome
        ) {
          // A legacy server that lost our session may say so with 400 instead of 404: the
          // official server-everything answers "Bad Request: No valid session ID provided"
          // after a restart. A fresh session is worth one try.
          session.forget();
          throw new SessionGoneError();
        }
        return answerTo(title, message, call, !response.ok);
      }
      await response.body?.cancel();
      if (UNREACHABLE_STATUSES.has(response.status)) {
        session.forget();
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
      const response = await session.post(
        body,
        session.headersFor(method, undefined, version),
        signal,
      );
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
        session.postQuietly(body, call.version, "notifications/cancelled");
      }
      return Promise.resolve();
    },

    async close() {
      if (session.id === null) return;
      const headers = session.headersFor(null, undefined, null);
      session.id = null;
      try {
        const response = await fetch(url, {
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
