/**
 * A small MCP server of our own, written by hand (no SDK): the upstream of the gateway's tests
 * and the "direct" baseline of the gateway benchmark, so its hot path is JSON.parse and a
 * switch. Never imported by production code.
 *
 *   const upstream = startTinyUpstream({ era: "both", answer: "sse" });
 *   // upstream.url is http://127.0.0.1:PORT/mcp; it lists ADD_TOOL until told otherwise
 *   upstream.setTools([ADD_TOOL, { definition: { name: "echo", … }, handler }], { notify: true });
 *   await upstream.close();
 *
 * Eras (MCP 2026-07-28 "Versioning"): `legacy` (the default, as common servers are) opens with
 * initialize (2025-11-25 or 2025-06-18), issues an Mcp-Session-Id, wants it on every later
 * request and answers 404 to one it does not know; `modern` answers server/discover and takes
 * each request's version from its `_meta` and headers, without sessions; `both` serves each
 * request in the era it speaks. `GET /health` answers `{"calls": N}` (the count of tools/call
 * received) to whoever waits for it to start, or checks from another process that calls came.
 */
import { encodeSseEvent } from "../src/mcp/sse.ts";
import {
  HEADER_MISMATCH,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  TRANSPORT_ERROR,
  UNSUPPORTED_PROTOCOL_VERSION,
} from "../src/mcp/errors.ts";
import { META } from "../src/mcp/messages.ts";
import { decodeHeaderValue } from "../src/mcp/negotiation.ts";
import {
  MODERN_PROTOCOL_VERSION,
  negotiateVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "../src/mcp/versions.ts";

/** A tool as tools/list shows it; loose, so a test can also list a malformed one. */
export type TinyToolDefinition = { readonly name: string } & Readonly<Record<string, unknown>>;

/** A tools/call result as sent (`content`, `structuredContent`, `isError`, …). */
export type TinyResult = Readonly<Record<string, unknown>>;

export interface TinyCallContext {
  /** Aborted when the client sends notifications/cancelled for this call. */
  readonly signal: AbortSignal;
  /** The request's `_meta`, as sent. */
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  /** Sends notifications/progress when the call asked (progressToken) and answers are SSE. */
  progress(progress: number, total?: number, message?: string): void;
}

export interface TinyTool {
  readonly definition: TinyToolDefinition;
  /** A thrown error becomes a JSON-RPC -32603 answer. */
  handler(
    args: Record<string, unknown>,
    context: TinyCallContext,
  ): TinyResult | Promise<TinyResult>;
}

export interface TinyUpstreamOptions {
  readonly era?: "legacy" | "modern" | "both";
  readonly answer?: "json" | "sse";
  /** 0 (the default): a free port, read back from `port`. */
  readonly port?: number;
  /** Listing order; ADD_TOOL by default. */
  readonly tools?: readonly TinyTool[];
  /** Tools per tools/list page; all on one page by default. */
  readonly pageSize?: number;
  /** 2026-07-28 "Caching": the ttlMs of discover and tools/list answers (0 by default). */
  readonly ttlMs?: number;
}

export interface TinyCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly meta: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Headers;
}

export interface TinyUpstream {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  readonly url: string;
  readonly port: number;
  /** tools/call requests received, answered or not. */
  readonly calls: number;
  /** The last tools/call received, with its request headers; null before the first. */
  readonly lastCall: TinyCall | null;
  /** Notifications the client sent, in order (method and params). */
  readonly notifications: readonly { method: string; params: unknown }[];
  /** Legacy sessions open now. */
  readonly sessions: number;
  /**
   * Replaces the listed tools; with `notify`, every open event stream (a session's GET
   * stream, an SSE answer still running) gets notifications/tools/list_changed.
   */
  setTools(tools: readonly TinyTool[], options?: { notify?: boolean }): void;
  /** Forgets every session, as a restart would: their next request gets 404. */
  dropSessions(): void;
  close(): Promise<void>;
}

export const ADD_TOOL: TinyTool = {
  definition: {
    name: "add",
    title: "Add",
    description: "Adds two numbers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    outputSchema: {
      type: "object",
      properties: { sum: { type: "number" } },
      required: ["sum"],
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  handler({ a, b }) {
    if (typeof a !== "number" || typeof b !== "number") {
      return { content: [{ type: "text", text: '"a" and "b" must be numbers' }], isError: true };
    }
    const sum = a + b;
    return { content: [{ type: "text", text: String(sum) }], structuredContent: { sum } };
  },
};

const SERVER_INFO = { name: "tiny-upstream", version: "1.0.0" };
const CAPABILITIES = { tools: { listChanged: true } };
const JSON_HEADERS = { "Content-Type": "application/json" };
const SSE_HEADERS = { "Content-Type": "text/event-stream", "Cache-Control": "no-store" };
const LIST_CHANGED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });

interface Message {
  readonly id?: string | number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
}

interface Session {
  readonly version: string;
  /** Its GET streams. */
  readonly streams: Set<ReadableStreamDefaultController<Uint8Array>>;
}

/** A request's JSON-RPC reply, as JSON text. */
type Answer = string | Promise<string>;

export function startTinyUpstream(options: TinyUpstreamOptions = {}): TinyUpstream {
  const era = options.era ?? "legacy";
  const sse = options.answer === "sse";
  const ttlMs = options.ttlMs ?? 0;
  const sessions = new Map<string, Session>();
  /** SSE answers still running: they too hear of list changes. */
  const openAnswers = new Set<ReadableStreamDefaultController<Uint8Array>>();
  /** Calls in flight by session and request id, for notifications/cancelled. */
  const inFlight = new Map<string, AbortController>();
  const notifications: { method: string; params: unknown }[] = [];
  const encoder = new TextEncoder();
  let tools = new Map<string, TinyTool>();
  let pages: { legacy: string; modern: string }[] = [];
  let calls = 0;
  let lastCall: TinyCall | null = null;

  const setTools = (next: readonly TinyTool[]) => {
    tools = new Map(next.map((tool) => [tool.definition.name, tool]));
    const all = next.map((tool) => tool.definition);
    const size = options.pageSize ?? Math.max(all.length, 1);
    pages = [];
    for (let start = 0; start === 0 || start < all.length; start += size) {
      const page: Record<string, unknown> = { tools: all.slice(start, start + size) };
      if (start + size < all.length) page["nextCursor"] = String(pages.length + 1);
      pages.push({
        legacy: JSON.stringify(page),
        modern: JSON.stringify({ resultType: "complete", ...page, ttlMs, cacheScope: "public" }),
      });
    }
  };
  setTools(options.tools ?? [ADD_TOOL]);

  const call = (
    message: Message,
    headers: Headers,
    modern: boolean,
    sessionId: string,
    send: ((message: string) => void) | null,
  ): Answer => {
    calls++;
    const params = message.params ?? {};
    const { name } = params;
    const args = params["arguments"] ?? {};
    const meta = params["_meta"] as Record<string, unknown> | undefined;
    if (typeof name !== "string" || typeof args !== "object" || args === null) {
      return _error(message.id, INVALID_PARAMS, 'Invalid params: "name" and "arguments"');
    }
    lastCall = { name, arguments: args as Record<string, unknown>, meta, headers };
    const tool = tools.get(name);
    if (tool === undefined) {
      return _error(message.id, INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    const key = `${sessionId} ${JSON.stringify(message.id)}`;
    const abort = new AbortController();
    inFlight.set(key, abort);
    const token = meta?.["progressToken"];
    const context: TinyCallContext = {
      signal: abort.signal,
      meta,
      progress(progress, total, text) {
        if (send === null || token === undefined) return;
        send(JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress, total, message: text },
        }));
      },
    };
    const done = (result: TinyResult) => {
      inFlight.delete(key);
      return _result(message.id, modern ? { resultType: "complete", ...result } : result);
    };
    const failed = () => {
      inFlight.delete(key);
      return _error(message.id, -32603, "Internal error");
    };
    try {
      const result = tool.handler(args as Record<string, unknown>, context);
      return result instanceof Promise ? result.then(done, failed) : done(result);
    } catch {
      return failed();
    }
  };

  /** One request of either era, once its transport checks passed. */
  const answer = (
    message: Message,
    headers: Headers,
    modern: boolean,
    sessionId: string,
    send: ((message: string) => void) | null,
  ): Answer => {
    const { id, method } = message;
    switch (method) {
      case "tools/call":
        return call(message, headers, modern, sessionId, send);
      case "tools/list": {
        const cursor = message.params?.["cursor"];
        const page = pages[cursor === undefined ? 0 : Number(cursor)];
        if (page === undefined || (cursor !== undefined && !/^[1-9]\d*$/.test(String(cursor)))) {
          return _error(id, INVALID_PARAMS, "Invalid params: unknown cursor");
        }
        return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${
          modern ? page.modern : page.legacy
        }}`;
      }
      case "server/discover":
        if (modern) {
          return _result(id, {
            resultType: "complete",
            supportedVersions: _supported(era),
            capabilities: CAPABILITIES,
            ttlMs,
            cacheScope: "public",
            _meta: { [META.serverInfo]: SERVER_INFO },
          });
        }
        break;
      case "ping":
        if (!modern) return _result(id, {});
        break;
    }
    return _error(id, METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
  };

  /** An answer as JSON, or as an event stream that `run`'s notifications may precede. */
  const respond = (
    headers: Record<string, string>,
    run: (send: ((message: string) => void) | null) => Answer,
  ): Response | Promise<Response> => {
    if (!sse) {
      const result = run(null);
      const json = (body: string) =>
        new Response(body, { headers: { ...JSON_HEADERS, ...headers } });
      return typeof result === "string" ? json(result) : result.then(json);
    }
    let stream!: ReadableStreamDefaultController<Uint8Array>;
    let open = true;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stream = controller;
        openAnswers.add(controller);
      },
      cancel() {
        open = false;
        openAnswers.delete(stream);
      },
    });
    const send = (message: string) => {
      if (open) stream.enqueue(encoder.encode(encodeSseEvent(message)));
    };
    Promise.resolve(run(send)).then((result) => {
      send(result);
      if (open) stream.close();
      open = false;
      openAnswers.delete(stream);
    });
    return new Response(body, { headers: { ...SSE_HEADERS, ...headers } });
  };

  const post = async (request: Request): Promise<Response> => {
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
      return _refuse(415, null, "Unsupported Media Type: Content-Type must be application/json");
    }
    const accept = request.headers.get("accept") ?? "";
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      return _refuse(
        406,
        null,
        "Not Acceptable: Accept must list application/json and text/event-stream",
      );
    }
    let message: Message;
    try {
      // A test server on loopback: its only clients are ours, so the body is read whole.
      message = JSON.parse(await request.text());
    } catch {
      return _refuse(400, null, "Parse error: the body is not JSON", PARSE_ERROR);
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return _refuse(400, null, "Invalid request: expected one JSON-RPC object", INVALID_REQUEST);
    }
    const header = request.headers.get("mcp-protocol-version");
    const claimed = message.params?.["_meta"] === undefined
      ? undefined
      : (message.params["_meta"] as Record<string, unknown>)[META.protocolVersion];
    const speaksModern = claimed !== undefined || header === MODERN_PROTOCOL_VERSION;
    if (era !== "legacy" && speaksModern) return modernRequest(request, message, header, claimed);
    if (era === "modern") {
      return _refuse(
        400,
        message.id ?? null,
        `Unsupported protocol version: ${
          JSON.stringify(header ?? message.params?.["protocolVersion"] ?? null)
        }; supported versions: ${MODERN_PROTOCOL_VERSION}`,
        UNSUPPORTED_PROTOCOL_VERSION,
      );
    }
    return legacyRequest(request, message, header);
  };

  const modernRequest = (
    request: Request,
    message: Message,
    header: string | null,
    claimed: unknown,
  ): Response | Promise<Response> => {
    const id = message.id ?? null;
    if (header !== claimed) {
      return _refuse(
        400,
        id,
        `Bad Request: MCP-Protocol-Version ${JSON.stringify(header)} does not match _meta ` +
          `${JSON.stringify(claimed ?? null)}`,
        HEADER_MISMATCH,
      );
    }
    if (header !== MODERN_PROTOCOL_VERSION) {
      return new Response(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          error: {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: `Unsupported protocol version: ${JSON.stringify(header)}`,
            data: { supported: _supported(era), requested: header },
          },
        }),
        { status: 400, headers: JSON_HEADERS },
      );
    }
    if (message.method === undefined) return new Response(null, { status: 202 });
    if (message.id === undefined) {
      notifications.push({ method: message.method, params: message.params });
      if (message.method === "notifications/cancelled") cancel("", message.params);
      return new Response(null, { status: 202 });
    }
    const method = request.headers.get("mcp-method");
    if (method !== message.method) {
      return _refuse(
        400,
        id,
        `Bad Request: Mcp-Method ${JSON.stringify(method)} does not match the method`,
        HEADER_MISMATCH,
      );
    }
    const name = message.params?.["name"];
    if (method === "tools/call" && typeof name === "string") {
      const raw = request.headers.get("mcp-name");
      if (raw === null || decodeHeaderValue(raw) !== name) {
        return _refuse(
          400,
          id,
          `Bad Request: Mcp-Name ${JSON.stringify(raw)} does not match params.name`,
          HEADER_MISMATCH,
        );
      }
    }
    return respond({}, (send) => answer(message, request.headers, true, "", send));
  };

  const legacyRequest = (
    request: Request,
    message: Message,
    header: string | null,
  ): Response | Promise<Response> => {
    const id = message.id ?? null;
    if (message.method === "initialize" && message.id !== undefined) {
      const asked = message.params?.["protocolVersion"];
      const version = negotiateVersion(typeof asked === "string" ? asked : "");
      const sessionId = crypto.randomUUID();
      sessions.set(sessionId, { version, streams: new Set() });
      return respond({ "Mcp-Session-Id": sessionId }, () =>
        _result(message.id, {
          protocolVersion: version,
          capabilities: CAPABILITIES,
          serverInfo: SERVER_INFO,
        }));
    }
    const found = _session(request, sessions);
    if (found instanceof Response) return found;
    const [sessionId, session] = found;
    if (header !== null && header !== session.version) {
      return _refuse(
        400,
        id,
        `Bad Request: MCP-Protocol-Version ${JSON.stringify(header)} is not the session's ` +
          JSON.stringify(session.version),
      );
    }
    if (message.method === undefined) return new Response(null, { status: 202 });
    if (message.id === undefined) {
      notifications.push({ method: message.method, params: message.params });
      if (message.method === "notifications/cancelled") cancel(sessionId, message.params);
      return new Response(null, { status: 202 });
    }
    return respond({}, (send) => answer(message, request.headers, false, sessionId, send));
  };

  const cancel = (sessionId: string, params: Record<string, unknown> | undefined) => {
    inFlight.get(`${sessionId} ${JSON.stringify(params?.["requestId"])}`)?.abort();
  };

  /** A session's own event stream (legacy GET), where list changes are announced. */
  const listen = (request: Request): Response => {
    if (era === "modern") return _refuse(405, null, "Method Not Allowed", TRANSPORT_ERROR);
    if (!(request.headers.get("accept") ?? "").includes("text/event-stream")) {
      return _refuse(406, null, "Not Acceptable: Accept must list text/event-stream");
    }
    const found = _session(request, sessions);
    if (found instanceof Response) return found;
    const { streams } = found[1];
    let stream!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        stream = controller;
        streams.add(controller);
        // An SSE comment: the headers and a first byte leave now.
        controller.enqueue(encoder.encode(": open\n\n"));
      },
      cancel() {
        streams.delete(stream);
      },
    });
    return new Response(body, { headers: SSE_HEADERS });
  };

  const end = (request: Request): Response => {
    if (era === "modern") return _refuse(405, null, "Method Not Allowed", TRANSPORT_ERROR);
    const found = _session(request, sessions);
    if (found instanceof Response) return found;
    closeSession(found[0]);
    return new Response(null, { status: 204 });
  };

  const closeSession = (sessionId: string) => {
    for (const stream of sessions.get(sessionId)?.streams ?? []) stream.close();
    sessions.delete(sessionId);
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen() {} },
    (request) => {
      const url = request.url;
      const path = url.slice(url.indexOf("/", 8));
      if (path === "/health" && request.method === "GET") {
        return new Response(JSON.stringify({ calls }), { headers: JSON_HEADERS });
      }
      if (path !== "/mcp") return new Response("Not Found", { status: 404 });
      switch (request.method) {
        case "POST":
          return post(request);
        case "GET":
          return listen(request);
        case "DELETE":
          return end(request);
        default:
          return new Response(null, { status: 405, headers: { Allow: "GET, POST, DELETE" } });
      }
    },
  );
  const port = server.addr.port;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    get calls() {
      return calls;
    },
    get lastCall() {
      return lastCall;
    },
    notifications,
    get sessions() {
      return sessions.size;
    },
    setTools(next, { notify = false } = {}) {
      setTools(next);
      if (!notify) return;
      const event = encoder.encode(encodeSseEvent(LIST_CHANGED));
      for (const session of sessions.values()) {
        for (const stream of session.streams) stream.enqueue(event);
      }
      for (const stream of openAnswers) stream.enqueue(event);
    },
    dropSessions() {
      for (const sessionId of [...sessions.keys()]) closeSession(sessionId);
    },
    async close() {
      for (const sessionId of [...sessions.keys()]) closeSession(sessionId);
      for (const abort of inFlight.values()) abort.abort();
      await server.shutdown();
    },
  };
}

function _supported(era: "legacy" | "modern" | "both"): string[] {
  return era === "modern" ? [MODERN_PROTOCOL_VERSION] : [...SUPPORTED_PROTOCOL_VERSIONS];
}

/** The request's session: missing is 400, unknown (ended, or never issued) is 404. */
function _session(
  request: Request,
  sessions: ReadonlyMap<string, Session>,
): [string, Session] | Response {
  const sessionId = request.headers.get("mcp-session-id");
  if (sessionId === null) {
    return _refuse(400, null, "Bad Request: the Mcp-Session-Id header is missing");
  }
  const session = sessions.get(sessionId);
  // -32001 as the MCP SDK's servers answer it: the client must initialize again.
  if (session === undefined) return _refuse(404, null, "Session not found", -32001);
  return [sessionId, session];
}

function _result(id: unknown, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`;
}

function _error(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

function _refuse(
  status: number,
  id: unknown,
  message: string,
  code: number = TRANSPORT_ERROR,
): Response {
  return new Response(_error(id, code, message), { status, headers: JSON_HEADERS });
}
