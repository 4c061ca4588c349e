// Pure dispatch: one decoded JSON-RPC message in, one outcome out. Knows nothing of HTTP;
// the transport decides how an outcome travels (202, JSON, or an event stream).
import * as v from "valibot";
import { describeError, type LogSink } from "../http/request_log.ts";
import { encodeMessage, encodeResult } from "./codec.ts";
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  JsonRpcError,
  METHOD_NOT_FOUND,
  rpcError,
} from "./errors.ts";
import { describeIssues } from "./issues.ts";
import {
  type CallToolParams,
  CallToolParamsSchema,
  type CallToolResult,
  InitializeParamsSchema,
  type InitializeResult,
  type JsonRpcRequest,
  ListToolsParamsSchema,
  ParamsSchema,
  type ProgressNotification,
  type ProgressToken,
} from "./messages.ts";
import type { ToolRegistry } from "./registry.ts";
import { type AnyTool, type ToolCallContext, ToolError } from "./tool.ts";
import { negotiateVersion, SUPPORTED_PROTOCOL_VERSIONS } from "./versions.ts";

export interface ServerInfo {
  readonly name: string;
  readonly title: string;
  readonly version: string;
}

export interface DispatcherOptions<A> {
  readonly registry: ToolRegistry<A>;
  readonly serverInfo: ServerInfo;
  /** Short guidance the client may show its model (initialize `instructions`). */
  readonly instructions: string;
  readonly log: LogSink;
}

/** Writes one JSON-RPC message (JSON text) to a stream that is already open. */
export type Send = (message: string) => Promise<void>;

export type Outcome =
  /** One JSON-RPC response, as JSON text. */
  | { readonly kind: "reply"; readonly body: string }
  /**
   * Notifications first, then the response: `run` sends the notifications as they happen and
   * resolves with the response text.
   */
  | { readonly kind: "stream"; readonly run: (send: Send) => Promise<string> };

export interface Dispatcher<A> {
  /** A request (it has an id). Notifications and responses need no dispatch: they get 202. */
  dispatch(request: JsonRpcRequest, auth: A): Promise<Outcome>;
}

export function createDispatcher<A>(options: DispatcherOptions<A>): Dispatcher<A> {
  const { registry, log } = options;
  // One answer per supported version, serialized once.
  const initializeResults = new Map(SUPPORTED_PROTOCOL_VERSIONS.map((version) => {
    const result: InitializeResult = {
      protocolVersion: version,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { ...options.serverInfo },
      instructions: options.instructions,
    };
    return [version, JSON.stringify(result)];
  }));
  const reply = (body: string): Outcome => ({ kind: "reply", body });

  const internal = (request: JsonRpcRequest, error: unknown): string => {
    log(JSON.stringify({
      level: "error",
      message: "MCP request failed",
      method: request.method,
      ...describeError(error),
    }));
    return encodeMessage(rpcError(request.id, INTERNAL_ERROR, "Internal error"));
  };

  const errorReply = (request: JsonRpcRequest, error: unknown): string =>
    error instanceof JsonRpcError
      ? encodeMessage(rpcError(request.id, error.code, error.message, error.data))
      : internal(request, error);

  const runTool = async (
    request: JsonRpcRequest,
    tool: AnyTool<A>,
    args: unknown,
    context: ToolCallContext<A>,
  ): Promise<string> => {
    let result: CallToolResult;
    try {
      const output = await tool.handler(args, context);
      const checked = v.safeParse(tool.output, output);
      if (!checked.success) {
        log(JSON.stringify({
          level: "error",
          message: "tool output does not match its schema",
          tool: tool.name,
          // Paths only: the received values may be account data.
          fields: checked.issues.map((issue) => v.getDotPath(issue) ?? "(root)"),
        }));
        return encodeMessage(rpcError(request.id, INTERNAL_ERROR, "Internal error"));
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
    return encodeResult(request.id, JSON.stringify(result));
  };

  const callTool = async (
    request: JsonRpcRequest,
    params: CallToolParams,
    auth: A,
  ): Promise<Outcome> => {
    const { name, arguments: args = {}, _meta } = params;
    const tool = registry.find(name);
    if (tool === undefined) {
      throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    const parsed = v.safeParse(tool.input, args);
    if (!parsed.success) {
      const result = _errorResult(`Invalid arguments: ${describeIssues(parsed.issues)}`);
      return reply(encodeResult(request.id, JSON.stringify(result)));
    }
    const token = _meta?.progressToken;
    if (token === undefined || !tool.reportsProgress) {
      const context = { auth, progress: () => Promise.resolve() };
      return reply(await runTool(request, tool, parsed.output, context));
    }
    return {
      kind: "stream",
      run: (send) =>
        runTool(request, tool, parsed.output, {
          auth,
          progress: (progress, total, message) =>
            send(encodeMessage(_progress(token, progress, total, message))),
        }),
    };
  };

  const route = (request: JsonRpcRequest, auth: A): Outcome | Promise<Outcome> => {
    switch (request.method) {
      case "initialize": {
        const params = _params(InitializeParamsSchema, request);
        const result = initializeResults.get(negotiateVersion(params.protocolVersion))!;
        return reply(encodeResult(request.id, result));
      }
      case "ping":
        if (request.params !== undefined) _params(ParamsSchema, request);
        return reply(encodeResult(request.id, "{}"));
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
        return reply(encodeResult(request.id, page));
      }
      case "tools/call":
        return callTool(request, _params(CallToolParamsSchema, request), auth);
      default:
        throw new JsonRpcError(
          METHOD_NOT_FOUND,
          `Method not found: ${JSON.stringify(request.method)}`,
        );
    }
  };

  const failed = (request: JsonRpcRequest, error: unknown): Outcome =>
    reply(errorReply(request, error));
  return {
    // Not async: initialize, ping and tools/list are answered synchronously, and an async
    // wrapper would add a frame and a microtask to each of them.
    dispatch(request, auth) {
      try {
        const outcome = route(request, auth);
        return outcome instanceof Promise
          ? outcome.catch((error: unknown) => failed(request, error))
          : Promise.resolve(outcome);
      } catch (error) {
        return Promise.resolve(failed(request, error));
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
