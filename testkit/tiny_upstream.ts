/**
 * A small MCP server of our own, written by hand (no SDK): the upstream of the gateway's tests
 * and the "direct" baseline of the gateway benchmark, so its hot path is JSON.parse and a
 * switch. This module is its HTTP side (Streamable HTTP, sessions, SSE); the MCP messages are
 * answered in tiny_upstream_dispatch.ts and its tools are written as tiny_upstream_tools.ts
 * shows. Never imported by production code.
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
  INVALID_REQUEST,
  PARSE_ERROR,
  TRANSPORT_ERROR,
  UNSUPPORTED_PROTOCOL_VERSION,
} from "../src/mcp/errors.ts";
import { META } from "../src/mcp/messages.ts";
import { decodeHeaderValue } from "../src/mcp/negotiation.ts";
import { MODERN_PROTOCOL_VERSION, negotiateVersion } from "../src/mcp/versions.ts";
import {
  createTinyDispatcher,
  initializeResult,
  rpcError,
  supportedVersions,
  type TinyAnswer,
  type TinyEra,
  type TinyMessage,
  type TinySend,
} from "./tiny_upstream_dispatch.ts";
import { ADD_TOOL, type TinyCall, type TinyTool } from "./tiny_upstream_tools.ts";

export interface TinyUpstreamOptions {
  readonly era?: TinyEra;
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

const JSON_HEADERS = { "Content-Type": "application/json" };
const SSE_HEADERS = { "Content-Type": "text/event-stream", "Cache-Control": "no-store" };
const LIST_CHANGED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
const ENCODER = new TextEncoder();

type Stream = ReadableStreamDefaultController<Uint8Array>;

interface Session {
  readonly version: string;
  /** Its GET streams. */
  readonly streams: Set<Stream>;
}

export function startTinyUpstream(options: TinyUpstreamOptions = {}): TinyUpstream {
  const era = options.era ?? "legacy";
  const sse = options.answer === "sse";
  const sessions = new Map<string, Session>();
  /** SSE answers still running: they too hear of list changes. */
  const openAnswers = new Set<Stream>();
  const dispatcher = createTinyDispatcher({
    era,
    ttlMs: options.ttlMs ?? 0,
    pageSize: options.pageSize,
  });
  dispatcher.setTools(options.tools ?? [ADD_TOOL]);

  /** An answer as JSON, or as an event stream that `run`'s notifications may precede. */
  const respond = (headers: Record<string, string>, run: (send: TinySend) => TinyAnswer) =>
    sse ? _sseAnswer(openAnswers, headers, run) : _jsonAnswer(headers, run);

  const post = async (request: Request): Promise<Response> => {
    const message = await _readMessage(request);
    if (message instanceof Response) return message;
    const header = request.headers.get("mcp-protocol-version");
    const claimed = message.params?.["_meta"] === undefined
      ? undefined
      : (message.params["_meta"] as Record<string, unknown>)[META.protocolVersion];
    const speaksModern = claimed !== undefined || header === MODERN_PROTOCOL_VERSION;
    if (era !== "legacy" && speaksModern) return modernRequest(request, message, header, claimed);
    if (era === "modern") return _legacyRefusal(message, header);
    return legacyRequest(request, message, header);
  };

  const modernRequest = (
    request: Request,
    message: TinyMessage,
    header: string | null,
    claimed: unknown,
  ): Response | Promise<Response> => {
    const refused = _versionRefusal(message.id ?? null, header, claimed, era);
    if (refused !== null) return refused;
    if (message.method === undefined) return new Response(null, { status: 202 });
    if (message.id === undefined) {
      dispatcher.notification(message.method, message.params, "");
      return new Response(null, { status: 202 });
    }
    return _headerRefusal(request, message) ??
      respond({}, (send) => dispatcher.answer(message, request.headers, true, "", send));
  };

  const legacyRequest = (
    request: Request,
    message: TinyMessage,
    header: string | null,
  ): Response | Promise<Response> => {
    if (message.method === "initialize" && message.id !== undefined) {
      const asked = message.params?.["protocolVersion"];
      const version = negotiateVersion(typeof asked === "string" ? asked : "");
      const sessionId = crypto.randomUUID();
      sessions.set(sessionId, { version, streams: new Set() });
      return respond({ "Mcp-Session-Id": sessionId }, () => initializeResult(message.id, version));
    }
    const found = _session(request, sessions);
    if (found instanceof Response) return found;
    const [sessionId, session] = found;
    if (header !== null && header !== session.version) {
      return _refuse(
        400,
        message.id ?? null,
        `Bad Request: MCP-Protocol-Version ${JSON.stringify(header)} is not the session's ` +
          JSON.stringify(session.version),
      );
    }
    if (message.method === undefined) return new Response(null, { status: 202 });
    if (message.id === undefined) {
      dispatcher.notification(message.method, message.params, sessionId);
      return new Response(null, { status: 202 });
    }
    return respond(
      {},
      (send) => dispatcher.answer(message, request.headers, false, sessionId, send),
    );
  };

  const end = (request: Request): Response => {
    if (era === "modern") return _refuse(405, null, "Method Not Allowed", TRANSPORT_ERROR);
    const found = _session(request, sessions);
    if (found instanceof Response) return found;
    _closeSession(sessions, found[0]);
    return new Response(null, { status: 204 });
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen() {} },
    (request) => {
      const url = request.url;
      const path = url.slice(url.indexOf("/", 8));
      if (path === "/health" && request.method === "GET") {
        return new Response(JSON.stringify({ calls: dispatcher.calls }), { headers: JSON_HEADERS });
      }
      if (path !== "/mcp") return new Response("Not Found", { status: 404 });
      switch (request.method) {
        case "POST":
          return post(request);
        case "GET":
          return _listen(request, era, sessions);
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
      return dispatcher.calls;
    },
    get lastCall() {
      return dispatcher.lastCall;
    },
    notifications: dispatcher.notifications,
    get sessions() {
      return sessions.size;
    },
    setTools(next, { notify = false } = {}) {
      dispatcher.setTools(next);
      if (notify) _announceListChanged(sessions, openAnswers);
    },
    dropSessions() {
      for (const sessionId of [...sessions.keys()]) _closeSession(sessions, sessionId);
    },
    async close() {
      for (const sessionId of [...sessions.keys()]) _closeSession(sessions, sessionId);
      dispatcher.abortAll();
      await server.shutdown();
    },
  };
}

/** A POST's one JSON-RPC object, or the refusal of a wrong media type, Accept or body. */
async function _readMessage(request: Request): Promise<TinyMessage | Response> {
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
  let message: TinyMessage;
  try {
    // A test server on loopback: its only clients are ours, so the body is read whole.
    message = JSON.parse(await request.text());
  } catch {
    return _refuse(400, null, "Parse error: the body is not JSON", PARSE_ERROR);
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return _refuse(400, null, "Invalid request: expected one JSON-RPC object", INVALID_REQUEST);
  }
  return message;
}

/** A modern-era server's answer to a request that speaks only a legacy version. */
function _legacyRefusal(message: TinyMessage, header: string | null): Response {
  return _refuse(
    400,
    message.id ?? null,
    `Unsupported protocol version: ${
      JSON.stringify(header ?? message.params?.["protocolVersion"] ?? null)
    }; supported versions: ${MODERN_PROTOCOL_VERSION}`,
    UNSUPPORTED_PROTOCOL_VERSION,
  );
}

/** A modern request's refusal when its header and `_meta` disagree or name another version. */
function _versionRefusal(
  id: unknown,
  header: string | null,
  claimed: unknown,
  era: TinyEra,
): Response | null {
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
          data: { supported: supportedVersions(era), requested: header },
        },
      }),
      { status: 400, headers: JSON_HEADERS },
    );
  }
  return null;
}

/** A modern request's refusal when Mcp-Method, or a tools/call's Mcp-Name, does not match. */
function _headerRefusal(request: Request, message: TinyMessage): Response | null {
  const id = message.id ?? null;
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
  return null;
}

function _jsonAnswer(
  headers: Record<string, string>,
  run: (send: TinySend) => TinyAnswer,
): Response | Promise<Response> {
  const result = run(null);
  const json = (body: string) => new Response(body, { headers: { ...JSON_HEADERS, ...headers } });
  return typeof result === "string" ? json(result) : result.then(json);
}

/** An event stream: `run`'s notifications, then its answer; open in `openAnswers` until then. */
function _sseAnswer(
  openAnswers: Set<Stream>,
  headers: Record<string, string>,
  run: (send: TinySend) => TinyAnswer,
): Response {
  let stream!: Stream;
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
    if (open) stream.enqueue(ENCODER.encode(encodeSseEvent(message)));
  };
  Promise.resolve(run(send)).then((result) => {
    send(result);
    if (open) stream.close();
    open = false;
    openAnswers.delete(stream);
  });
  return new Response(body, { headers: { ...SSE_HEADERS, ...headers } });
}

/** A session's own event stream (legacy GET), where list changes are announced. */
function _listen(request: Request, era: TinyEra, sessions: ReadonlyMap<string, Session>): Response {
  if (era === "modern") return _refuse(405, null, "Method Not Allowed", TRANSPORT_ERROR);
  if (!(request.headers.get("accept") ?? "").includes("text/event-stream")) {
    return _refuse(406, null, "Not Acceptable: Accept must list text/event-stream");
  }
  const found = _session(request, sessions);
  if (found instanceof Response) return found;
  const { streams } = found[1];
  let stream!: Stream;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
      streams.add(controller);
      // An SSE comment: the headers and a first byte leave now.
      controller.enqueue(ENCODER.encode(": open\n\n"));
    },
    cancel() {
      streams.delete(stream);
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

/** notifications/tools/list_changed on every session's GET streams and every open SSE answer. */
function _announceListChanged(
  sessions: ReadonlyMap<string, Session>,
  openAnswers: ReadonlySet<Stream>,
): void {
  const event = ENCODER.encode(encodeSseEvent(LIST_CHANGED));
  for (const session of sessions.values()) {
    for (const stream of session.streams) stream.enqueue(event);
  }
  for (const stream of openAnswers) stream.enqueue(event);
}

function _closeSession(sessions: Map<string, Session>, sessionId: string): void {
  for (const stream of sessions.get(sessionId)?.streams ?? []) stream.close();
  sessions.delete(sessionId);
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

function _refuse(
  status: number,
  id: unknown,
  message: string,
  code: number = TRANSPORT_ERROR,
): Response {
  return new Response(rpcError(id, code, message), { status, headers: JSON_HEADERS });
}
