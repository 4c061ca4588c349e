// The MCP messages of the tiny upstream (testkit/tiny_upstream.ts) once its HTTP transport let
// them through: tools/call, tools/list pages, server/discover, ping and initialize answered as
// JSON-RPC text, and the notifications a client sends. Never imported by production code.
import { INVALID_PARAMS, METHOD_NOT_FOUND } from "../src/mcp/errors.ts";
import { META } from "../src/mcp/messages.ts";
import { MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../src/mcp/versions.ts";
import type { TinyCall, TinyCallContext, TinyResult, TinyTool } from "./tiny_upstream_tools.ts";

export type TinyEra = "legacy" | "modern" | "both";

/** A JSON-RPC message as received. */
export interface TinyMessage {
  readonly id?: string | number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
}

/** A request's JSON-RPC reply, as JSON text. */
export type TinyAnswer = string | Promise<string>;

/** Sends a message (JSON text) before the answer on an SSE answer; null when answers are JSON. */
export type TinySend = ((message: string) => void) | null;

export interface TinyDispatcherOptions {
  readonly era: TinyEra;
  /** 2026-07-28 "Caching": the ttlMs of discover and tools/list answers. */
  readonly ttlMs: number;
  /** Tools per tools/list page; all on one page when undefined. */
  readonly pageSize?: number | undefined;
}

export interface TinyDispatcher {
  /** tools/call requests received, answered or not. */
  readonly calls: number;
  /** The last tools/call received, with its request headers; null before the first. */
  readonly lastCall: TinyCall | null;
  /** Notifications the client sent, in order (method and params). */
  readonly notifications: readonly { method: string; params: unknown }[];
  /** Replaces the listed tools (listing order). */
  setTools(tools: readonly TinyTool[]): void;
  /** One request of either era, once its transport checks passed. */
  answer(
    message: TinyMessage,
    headers: Headers,
    modern: boolean,
    sessionId: string,
    send: TinySend,
  ): TinyAnswer;
  /** A notification the client sent; notifications/cancelled aborts the call it names. */
  notification(
    method: string,
    params: Record<string, unknown> | undefined,
    sessionId: string,
  ): void;
  /** Aborts every call in flight. */
  abortAll(): void;
}

const SERVER_INFO = { name: "tiny-upstream", version: "1.0.0" };
const CAPABILITIES = { tools: { listChanged: true } };

/** A tools/list page as sent in each era. */
interface Page {
  readonly legacy: string;
  readonly modern: string;
}

export function createTinyDispatcher(options: TinyDispatcherOptions): TinyDispatcher {
  const { era, ttlMs } = options;
  /** Calls in flight by session and request id, for notifications/cancelled. */
  const inFlight = new Map<string, AbortController>();
  const notifications: { method: string; params: unknown }[] = [];
  let tools = new Map<string, TinyTool>();
  let pages: Page[] = [];
  let calls = 0;
  let lastCall: TinyCall | null = null;

  const call = (
    message: TinyMessage,
    headers: Headers,
    modern: boolean,
    sessionId: string,
    send: TinySend,
  ): TinyAnswer => {
    calls++;
    const params = message.params ?? {};
    const { name } = params;
    const args = params["arguments"] ?? {};
    const meta = params["_meta"] as Record<string, unknown> | undefined;
    if (typeof name !== "string" || typeof args !== "object" || args === null) {
      return rpcError(message.id, INVALID_PARAMS, 'Invalid params: "name" and "arguments"');
    }
    lastCall = { name, arguments: args as Record<string, unknown>, meta, headers };
    const tool = tools.get(name);
    if (tool === undefined) {
      return rpcError(message.id, INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    const key = `${sessionId} ${JSON.stringify(message.id)}`;
    const abort = new AbortController();
    inFlight.set(key, abort);
    const done = (result: TinyResult) => {
      inFlight.delete(key);
      return rpcResult(message.id, modern ? { resultType: "complete", ...result } : result);
    };
    const failed = () => {
      inFlight.delete(key);
      return rpcError(message.id, -32603, "Internal error");
    };
    try {
      const result = tool.handler(
        args as Record<string, unknown>,
        _context(abort.signal, meta, send),
      );
      return result instanceof Promise ? result.then(done, failed) : done(result);
    } catch {
      return failed();
    }
  };

  return {
    get calls() {
      return calls;
    },
    get lastCall() {
      return lastCall;
    },
    notifications,
    setTools(next) {
      tools = new Map(next.map((tool) => [tool.definition.name, tool]));
      pages = _pages(next, options.pageSize, ttlMs);
    },
    answer(message, headers, modern, sessionId, send) {
      const { id, method } = message;
      switch (method) {
        case "tools/call":
          return call(message, headers, modern, sessionId, send);
        case "tools/list":
          return _listPage(id, pages, message.params?.["cursor"], modern);
        case "server/discover":
          if (modern) {
            return rpcResult(id, {
              resultType: "complete",
              supportedVersions: supportedVersions(era),
              capabilities: CAPABILITIES,
              ttlMs,
              cacheScope: "public",
              _meta: { [META.serverInfo]: SERVER_INFO },
            });
          }
          break;
        case "ping":
          if (!modern) return rpcResult(id, {});
          break;
      }
      return rpcError(id, METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
    },
    notification(method, params, sessionId) {
      notifications.push({ method, params });
      if (method === "notifications/cancelled") {
        inFlight.get(`${sessionId} ${JSON.stringify(params?.["requestId"])}`)?.abort();
      }
    },
    abortAll() {
      for (const abort of inFlight.values()) abort.abort();
    },
  };
}

/** The answer to a legacy initialize that settled on `version`. */
export function initializeResult(id: unknown, version: string): string {
  return rpcResult(id, {
    protocolVersion: version,
    capabilities: CAPABILITIES,
    serverInfo: SERVER_INFO,
  });
}

/** The protocol versions an era's server supports, as server/discover lists them. */
export function supportedVersions(era: TinyEra): string[] {
  return era === "modern" ? [MODERN_PROTOCOL_VERSION] : [...SUPPORTED_PROTOCOL_VERSIONS];
}

export function rpcResult(id: unknown, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`;
}

export function rpcError(id: unknown, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

/** The tools/list pages of `tools`, `size` a page (all on one page when undefined). */
function _pages(tools: readonly TinyTool[], size: number | undefined, ttlMs: number): Page[] {
  const all = tools.map((tool) => tool.definition);
  const pageSize = size ?? Math.max(all.length, 1);
  const pages: Page[] = [];
  for (let start = 0; start === 0 || start < all.length; start += pageSize) {
    const page: Record<string, unknown> = { tools: all.slice(start, start + pageSize) };
    if (start + pageSize < all.length) page["nextCursor"] = String(pages.length + 1);
    pages.push({
      legacy: JSON.stringify(page),
      modern: JSON.stringify({ resultType: "complete", ...page, ttlMs, cacheScope: "public" }),
    });
  }
  return pages;
}

/** The tools/list answer for `cursor` (the first page without one). */
function _listPage(
  id: unknown,
  pages: readonly Page[],
  cursor: unknown,
  modern: boolean,
): string {
  const page = pages[cursor === undefined ? 0 : Number(cursor)];
  if (page === undefined || (cursor !== undefined && !/^[1-9]\d*$/.test(String(cursor)))) {
    return rpcError(id, INVALID_PARAMS, "Invalid params: unknown cursor");
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${
    modern ? page.modern : page.legacy
  }}`;
}

/** What a tool's handler is given: its abort signal, the request's `_meta`, and progress. */
function _context(
  signal: AbortSignal,
  meta: Record<string, unknown> | undefined,
  send: TinySend,
): TinyCallContext {
  const token = meta?.["progressToken"];
  return {
    signal,
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
}
