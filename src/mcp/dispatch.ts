// Pure dispatch: one decoded JSON-RPC request, in the revision it speaks, in; one outcome out.
// Knows nothing of HTTP; the transport decides how an outcome travels (JSON or an event stream).
// The revisions differ only here, as data and small branches: which methods exist, and what a
// 2026-07-28 result carries besides the common fields (resultType, serverInfo, caching hints).
import * as v from "valibot";
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { encodeMessage, encodeResult } from "./codec.ts";
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  JsonRpcError,
  METHOD_NOT_FOUND,
  rpcError,
} from "./errors.ts";
import { describeIssues } from "../issue_words.ts";
import {
  type CacheScope,
  type CallToolParams,
  CallToolParamsSchema,
  type CallToolResult,
  type DiscoverResult,
  InitializeParamsSchema,
  type InitializeResult,
  type JsonRpcRequest,
  ListToolsParamsSchema,
  META,
  ParamsSchema,
  type ProgressNotification,
  type ProgressToken,
} from "./messages.ts";
import type { ToolPage, ToolRegistry } from "./registry.ts";
import { type AnyTool, type ToolCallContext, ToolError } from "./tool.ts";
import {
  isModern,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSION,
  negotiateVersion,
  type ProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.ts";

export interface ServerInfo {
  readonly name: string;
  readonly title: string;
  readonly version: string;
}

/** MCP 2026-07-28 "Caching": the hints every cacheable result of an endpoint carries. */
export interface CacheHints {
  readonly ttlMs: number;
  readonly scope: CacheScope;
}

export interface DispatcherOptions<A> {
  readonly registry: ToolRegistry<A>;
  readonly serverInfo: ServerInfo;
  /** Short guidance the client may show its model (`instructions` of initialize and discover). */
  readonly instructions: string;
  readonly cache: CacheHints;
  readonly log: LogSink;
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

export interface Dispatcher<A> {
  /**
   * A request (it has an id), in the revision the transport negotiated for it. Notifications
   * and responses need no dispatch: they get 202. Rejects (and a stream's `run` too) only with
   * a StoreUnavailableError: every other failure is an error reply.
   */
  dispatch(request: JsonRpcRequest, auth: A, version: ProtocolVersion): Promise<Outcome>;
}

/** Every method a request may name (a bounded label for the metrics; others are -32601). */
export const DISPATCHED_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "server/discover",
  "tools/list",
  "tools/call",
]);

/** Methods of one era only: the handshake and ping are gone in 2026-07-28, discover is new. */
const LEGACY_ONLY = new Set(["initialize", "ping"]);
const MODERN_ONLY = new Set(["server/discover"]);

export function createDispatcher<A>(options: DispatcherOptions<A>): Dispatcher<A> {
  const { registry, log } = options;
  const serverInfo = { ...options.serverInfo };
  const capabilities = { tools: { listChanged: false } };
  // One initialize answer per legacy version, serialized once.
  const initializeResults = new Map(LEGACY_PROTOCOL_VERSIONS.map((version) => {
    const result: InitializeResult = {
      protocolVersion: version,
      capabilities,
      serverInfo,
      instructions: options.instructions,
    };
    return [version, JSON.stringify(result)];
  }));
  // 2026-07-28 "General fields": every result names its type and, as a SHOULD, its server.
  const resultMeta = { [META.serverInfo]: serverInfo };
  const modern = <R extends object>(result: R) => ({
    resultType: "complete" as const,
    ...result,
    _meta: resultMeta,
  });
  const cacheHints = { ttlMs: options.cache.ttlMs, cacheScope: options.cache.scope };
  const discoverResult: DiscoverResult = modern({
    supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities,
    instructions: options.instructions,
    ...cacheHints,
  });
  const discoverJson = JSON.stringify(discoverResult);
  // Each page serialized once per era, so listing costs the same in both.
  const pageJson = new Map<ToolPage, { readonly legacy: string; readonly modern: string }>(
    registry.pages.map((page) => [page, {
      legacy: JSON.stringify(page),
      modern: JSON.stringify(modern({ ...page, ...cacheHints })),
    }]),
  );
  const reply = (body: string): Reply => ({ kind: "reply", body });

  const internal = (request: JsonRpcRequest, error: unknown): JsonRpcError => {
    logEvent(log, {
      level: "error",
      message: "MCP request failed",
      method: request.method,
      ...describeError(error),
    });
    return new JsonRpcError(INTERNAL_ERROR, "Internal error");
  };

  const errorReply = (request: JsonRpcRequest, error: unknown): Reply => {
    // The operator's outage, not a protocol error: the transport answers it (HTTP 503).
    if (error instanceof StoreUnavailableError) throw error;
    const known = error instanceof JsonRpcError ? error : internal(request, error);
    return {
      kind: "reply",
      body: encodeMessage(rpcError(request.id, known.code, known.message, known.data)),
      errorCode: known.code,
    };
  };

  const toolResult = (
    request: JsonRpcRequest,
    result: CallToolResult,
    version: ProtocolVersion,
  ): Reply =>
    reply(encodeResult(request.id, JSON.stringify(isModern(version) ? modern(result) : result)));

  const runTool = async (
    request: JsonRpcRequest,
    tool: AnyTool<A>,
    args: unknown,
    context: ToolCallContext<A>,
    version: ProtocolVersion,
  ): Promise<Reply> => {
    let result: CallToolResult;
    try {
      const output = await tool.handler(args, context);
      const checked = v.safeParse(tool.output, output);
      if (!checked.success) {
        logEvent(log, {
          level: "error",
          message: "tool output does not match its schema",
          tool: tool.name,
          // Paths only: the received values may be account data.
          fields: checked.issues.map((issue) => v.getDotPath(issue) ?? "(root)"),
        });
        return errorReply(request, new JsonRpcError(INTERNAL_ERROR, "Internal error"));
      }
      const text = tool.text?.(checked.output) ?? JSON.stringify(checked.output);
      result = {
        content: [{ type: "text", text }],
        structuredContent: checked.output as Record<string, unknown>,
      };
    } catch (error) {
      if (!(error instanceof ToolError)) return errorReply(request, error);
      result = _errorResult(error.message);
    }
    return toolResult(request, result, version);
  };

  const callTool = async (
    request: JsonRpcRequest,
    params: CallToolParams,
    auth: A,
    version: ProtocolVersion,
  ): Promise<Outcome> => {
    const { name, arguments: args = {}, _meta } = params;
    const tool = registry.find(name);
    if (tool === undefined) {
      throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    const parsed = v.safeParse(tool.input, args);
    if (!parsed.success) {
      const result = _errorResult(`Invalid arguments: ${describeIssues(parsed.issues)}`);
      return toolResult(request, result, version);
    }
    const token = _meta?.progressToken;
    if (token === undefined || !tool.reportsProgress) {
      const context = { auth, progress: () => Promise.resolve() };
      return await runTool(request, tool, parsed.output, context, version);
    }
    return {
      kind: "stream",
      run: async (send) => {
        const context: ToolCallContext<A> = {
          auth,
          progress: (progress, total, message) =>
            send(encodeMessage(_progress(token, progress, total, message))),
        };
        return await runTool(request, tool, parsed.output, context, version);
      },
    };
  };

  const route = (
    request: JsonRpcRequest,
    auth: A,
    version: ProtocolVersion,
  ): Outcome | Promise<Outcome> => {
    const { method } = request;
    if (isModern(version) ? LEGACY_ONLY.has(method) : MODERN_ONLY.has(method)) {
      throw new JsonRpcError(
        METHOD_NOT_FOUND,
        `Method not found: ${JSON.stringify(method)} is not part of MCP ${version}` +
          (isModern(version)
            ? "; requests carry their version in _meta, and server/discover describes the server"
            : `; it is part of MCP ${MODERN_PROTOCOL_VERSION}`),
      );
    }
    switch (method) {
      case "initialize": {
        const params = _params(InitializeParamsSchema, request);
        const result = initializeResults.get(negotiateVersion(params.protocolVersion))!;
        return reply(encodeResult(request.id, result));
      }
      case "ping":
        if (request.params !== undefined) _params(ParamsSchema, request);
        return reply(encodeResult(request.id, "{}"));
      case "server/discover":
        return reply(encodeResult(request.id, discoverJson));
      case "tools/list": {
        // The envelope is already checked; only params can still be wrong.
        const cursor = request.params === undefined
          ? undefined
          : _params(ListToolsParamsSchema, request).cursor;
        const page = registry.page(cursor);
        if (page === undefined) {
          throw new JsonRpcError(
            INVALID_PARAMS,
            "Invalid params: the cursor was not issued by this server or has expired; " +
              "list again without a cursor",
          );
        }
        const json = pageJson.get(page)!;
        return reply(encodeResult(request.id, isModern(version) ? json.modern : json.legacy));
      }
      case "tools/call":
        return callTool(request, _params(CallToolParamsSchema, request), auth, version);
      default:
        throw new JsonRpcError(METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
    }
  };

  return {
    // Not async: initialize, discover and tools/list are answered synchronously, and an async
    // wrapper would add a frame and a microtask to each of them.
    dispatch(request, auth, version) {
      try {
        const outcome = route(request, auth, version);
        return outcome instanceof Promise
          ? outcome.catch((error: unknown) => errorReply(request, error))
          : Promise.resolve(outcome);
      } catch (error) {
        return Promise.resolve().then(() => errorReply(request, error));
      }
    },
  };
}

/**
 * Parses the params of a request whose envelope the codec already checked against its
 * method's params schema; bad params are -32602 naming each field (`"params.cursor"`).
 */
function _params<S extends v.GenericSchema>(schema: S, request: JsonRpcRequest): v.InferOutput<S> {
  const parsed = v.safeParse(schema, request.params);
  if (!parsed.success) {
    const issues = describeIssues(parsed.issues, "params");
    throw new JsonRpcError(INVALID_PARAMS, `Invalid params: ${issues}`);
  }
  return parsed.output;
}

function _errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function _progress(
  progressToken: ProgressToken,
  progress: number,
  total: number | undefined,
  message: string | undefined,
): ProgressNotification {
  return {
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: {
      progressToken,
      progress,
      ...(total === undefined ? {} : { total }),
      ...(message === undefined ? {} : { message }),
    },
  };
}
