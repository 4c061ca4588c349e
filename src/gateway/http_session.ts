// What the Streamable HTTP transport keeps between one upstream's POSTs: the legacy session id
// (and an epoch that tells callers it was lost), the request headers of each message, and the
// POSTs themselves, with a failed connection said in plain words.
import type { RequestId } from "../mcp/messages.ts";
import { encodeHeaderValue } from "../mcp/negotiation.ts";
import { MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import { UpstreamError } from "./mcp_client.ts";
import { refusal, type RpcCall } from "./rpc_channel.ts";

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

/** One upstream's end of the transport: its URL, its headers and its legacy session. */
export class HttpSession {
  readonly upstream: UpstreamConfig;
  readonly url: string;
  readonly fetch: UpstreamFetch;
  /** The legacy session (2025-11-25 `Mcp-Session-Id`), null while there is none. */
  id: string | null = null;
  #epoch = 0;
  readonly #operator: Readonly<Record<string, string>>;

  constructor(
    upstream: UpstreamConfig,
    url: string,
    operatorHeaders: Readonly<Record<string, string>>,
    fetch: UpstreamFetch,
  ) {
    this.upstream = upstream;
    this.url = url;
    this.fetch = fetch;
    this.#operator = _operatorHeaders(operatorHeaders);
  }

  /** Counts the sessions lost, so that a caller can tell a call of the last one from this one. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The session is gone (or the connection failed): the next message starts afresh. */
  forget(): void {
    this.id = null;
    this.#epoch++;
  }

  /**
   * A plain record per request: a Headers object, filled and then iterated by the client, cost
   * more than the rest of the request's head together.
   */
  headersFor(method: string | null, name: unknown, version: string | null): Record<string, string> {
    const headers: Record<string, string> = {
      ...this.#operator,
      "content-type": "application/json",
      "accept": "application/json, text/event-stream",
    };
    if (version !== null) headers["mcp-protocol-version"] = version;
    if (version === MODERN_PROTOCOL_VERSION && method !== null) {
      headers["mcp-method"] = method;
      if (NAMED_METHODS.has(method) && typeof name === "string") {
        headers["mcp-name"] = encodeHeaderValue(name);
      }
    } else if (this.id !== null) {
      headers["mcp-session-id"] = this.id;
    }
    return headers;
  }

  /** One POST; a connection that failed (not one the caller aborted) loses the session. */
  async post(
    body: string,
    headers: Readonly<Record<string, string>>,
    signal: AbortSignal,
    idempotent = false,
  ): Promise<Response> {
    try {
      return await this.fetch(this.url, { method: "POST", headers, body, signal, idempotent });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      this.forget();
      throw unreachable(this.upstream.title, error);
    }
  }

  /** Fire and forget: a message the upstream may or may not take (cancellations). */
  postQuietly(body: string, version: string | null, method: string | null): void {
    this.fetch(this.url, {
      method: "POST",
      headers: this.headersFor(method, undefined, version),
      body,
      signal: AbortSignal.timeout(this.upstream.timeoutMs),
    })
      .then((response) => response.body?.cancel())
      .catch(() => {});
  }

  /** A request the upstream sent on a call's stream, refused before the stream is read on. */
  async refuse(id: RequestId, method: string, call: RpcCall): Promise<void> {
    try {
      const response = await this.fetch(this.url, {
        method: "POST",
        headers: this.headersFor(null, undefined, call.version),
        body: refusal(id, method),
        signal: call.signal,
      });
      await response.body?.cancel();
    } catch {
      // The upstream may go on without it; the call's own answer still decides.
    }
  }
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
