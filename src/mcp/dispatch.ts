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
  URL_ELICITATION_REQUIRED,
} from "./errors.ts";
import {
  connectInputRequests,
  declaresUrlMode,
  retryOf,
  urlElicitationData,
  UrlElicitationRequired,
  type UrlElicitations,
} from "./elicitation.ts";
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
  progressNotification,
} from "./messages.ts";
import type { ToolPage, ToolRegistry } from "./registry.ts";
import {
  type AnyTool,
  errorResult,
  type ForwardedResult,
  type ForwardedTool,
  isForwarded,
  type Tool,
  type ToolCallContext,
  ToolError,
} from "./tool.ts";
import {
  answersWithTask,
  LEGACY_TASKS_CAPABILITY,
  LEGACY_TASKS_VERSION,
  MODERN_TASKS_CAPABILITY,
  TASK_METHODS,
  taskAnswer,
  type TaskHost,
  type TaskMetricState,
  taskRequest,
} from "./tasks.ts";
import {
  isModern,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSION,
  negotiateVersion,
  type ProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.ts";

/** MCP 2025-11-25 `Implementation`; the Server Card repeats each field (mcp/servers.ts). */
export interface ServerInfo {
  readonly name: string;
  readonly title: string;
  readonly version: string;
  readonly description?: string;
}

/** MCP 2026-07-28 "Caching": the hints every cacheable result of an endpoint carries. */
export interface CacheHints {
  readonly ttlMs: number;
  readonly scope: CacheScope;
}

export interface DispatcherOptions<A> {
  readonly serverInfo: ServerInfo;
  /** Short guidance the client may show its model (`instructions` of initialize and discover). */
  readonly instructions: string;
  readonly cache: CacheHints;
  readonly log: LogSink;
  /** Where a tool call may be answered with a task (tasks.ts); none: never. */
  readonly tasks?: TaskHost<A> | undefined;
  /** Told of each task created, and of each task's end once (the operator's metrics). */
  readonly onTask?: ((state: TaskMetricState) => void) | undefined;
  /** Where tools may ask the person to open a page (URL-mode elicitation). */
  readonly elicitations?: UrlElicitations<A> | undefined;
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

/** What a request is dispatched with besides its message. */
export interface DispatchContext<A> {
  readonly auth: A;
  readonly version: ProtocolVersion;
  /** The caller's catalogue (the same for every caller where tools do not depend on who asks). */
  readonly registry: ToolRegistry<A>;
  /** A tool call's: aborted when the caller cancels it or goes away (no other request reads it). */
  readonly signal: AbortSignal;
}

export interface Dispatcher<A> {
  /**
   * A request (it has an id), in the revision the transport negotiated for it. Notifications
   * and responses need no dispatch: they get 202. Rejects (and a stream's `run` too) only with
   * a StoreUnavailableError: every other failure is an error reply.
   */
  dispatch(request: JsonRpcRequest, context: DispatchContext<A>): Promise<Outcome>;
}

/** Every method a request may name (a bounded label for the metrics; others are -32601). */
export const DISPATCHED_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "server/discover",
  "tools/list",
  "tools/call",
  ...TASK_METHODS,
]);

/** Methods of one era only: the handshake and ping are gone in 2026-07-28, discover is new. */
const LEGACY_ONLY = new Set(["initialize", "ping"]);
const MODERN_ONLY = new Set(["server/discover"]);

export function createDispatcher<A>(options: DispatcherOptions<A>): Dispatcher<A> {
  const { log, tasks, elicitations } = options;
  const serverInfo = { ...options.serverInfo };
  const capabilities = { tools: { listChanged: false } };
  // One initialize answer per legacy version, serialized once; tasks only where they exist.
  const initializeResults = new Map(LEGACY_PROTOCOL_VERSIONS.map((version) => {
    const result: InitializeResult = {
      protocolVersion: version,
      capabilities: tasks && version === LEGACY_TASKS_VERSION
        ? { ...capabilities, tasks: LEGACY_TASKS_CAPABILITY }
        : capabilities,
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
    capabilities: tasks ? { ...capabilities, extensions: MODERN_TASKS_CAPABILITY } : capabilities,
    instructions: options.instructions,
    ...cacheHints,
  });
  const discoverJson = JSON.stringify(discoverResult);
  // Each page serialized once per era (as long as its registry lives), so listing costs the
  // same in both.
  const pageJson = new WeakMap<ToolPage, { readonly legacy: string; readonly modern: string }>();
  const serialized = (page: ToolPage) => {
    let json = pageJson.get(page);
    if (json === undefined) {
      json = {
        legacy: JSON.stringify(page),
        modern: JSON.stringify(modern({ ...page, ...cacheHints })),
      };
      pageJson.set(page, json);
    }
    return json;
  };
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

  // Passed on as it came; in 2026-07-28 its own `_meta` keys stay beside ours.
  const forwardedReply = (
    request: JsonRpcRequest,
    result: Readonly<Record<string, unknown>>,
    version: ProtocolVersion,
  ): Reply => {
    if (!isModern(version)) return reply(encodeResult(request.id, JSON.stringify(result)));
    const own = result["_meta"];
    const meta = typeof own === "object" && own !== null ? { ...own, ...resultMeta } : resultMeta;
    const body = { resultType: "complete", ...result, _meta: meta };
    return reply(encodeResult(request.id, JSON.stringify(body)));
  };

  /** How a call's result is answered: as it is, or as the task it started (answerAsTask). */
  type Answer = (result: Readonly<Record<string, unknown>>) => Reply | Promise<Reply>;

  const runForwarded = async (
    request: JsonRpcRequest,
    tool: ForwardedTool<A>,
    args: Readonly<Record<string, unknown>>,
    context: ToolCallContext<A>,
    answer: Answer,
    elicit: ((error: UrlElicitationRequired) => Promise<Reply | null>) | undefined,
  ): Promise<Reply> => {
    let result: ForwardedResult;
    try {
      result = await tool.forward(args, context);
    } catch (error) {
      if (!(error instanceof ToolError)) return errorReply(request, error);
      const asked = error instanceof UrlElicitationRequired && await elicit?.(error);
      if (asked) return asked;
      result = errorResult(error.message);
    }
    return await answer(result);
  };

  // A task-capable call answered with the task its result started (tasks.ts taskAnswer).
  const answerAsTask = (
    request: JsonRpcRequest,
    host: TaskHost<A>,
    auth: A,
    version: ProtocolVersion,
    plain: Answer,
  ): Answer =>
  async (result) => {
    const created = await taskAnswer(host, auth, result, version, options.onTask);
    if (created === null) return plain(result);
    const body = isModern(version) ? modern(created) : created;
    return reply(encodeResult(request.id, JSON.stringify(body)));
  };

  const runTool = async (
    request: JsonRpcRequest,
    tool: Tool<A, unknown, unknown>,
    args: unknown,
    context: ToolCallContext<A>,
    answer: Answer,
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
      result = errorResult(error.message);
    }
    return await answer(result);
  };

  /**
   * How a forwarded call may ask for a page visit, redeeming a 2026-07-28 retry's requestState
   * first (a bad one is -32602 and reaches no tool); undefined when it may not ask.
   */
  const urlElicitation = async (
    hooks: UrlElicitations<A>,
    request: JsonRpcRequest,
    params: CallToolParams,
    auth: A,
    version: ProtocolVersion,
  ): Promise<((error: UrlElicitationRequired) => Promise<Reply | null>) | undefined> => {
    const call = { name: params.name, arguments: params.arguments ?? {} };
    if (!isModern(version)) {
      return async (error) => {
        if (!await hooks.declared(auth)) return null;
        const data = urlElicitationData(error);
        const body = rpcError(request.id, URL_ELICITATION_REQUIRED, error.prompt, data);
        return { kind: "reply", body: encodeMessage(body), errorCode: URL_ELICITATION_REQUIRED };
      };
    }
    const retry = retryOf(params);
    if (retry.state !== undefined) {
      const problem = await hooks.redeem(auth, call, retry.state);
      if (problem !== null) {
        throw new JsonRpcError(INVALID_PARAMS, `Invalid params: params.requestState ${problem}`);
      }
    }
    if (retry.declined) return;
    return async (error) => {
      if (!declaresUrlMode(params._meta?.[META.clientCapabilities])) return null;
      const asked = modern({
        resultType: "input_required",
        inputRequests: connectInputRequests(error),
        requestState: await hooks.issue(auth, call),
      });
      return reply(encodeResult(request.id, JSON.stringify(asked)));
    };
  };

  const callTool = async (
    request: JsonRpcRequest,
    params: CallToolParams,
    { auth, version, registry, signal }: DispatchContext<A>,
  ): Promise<Outcome> => {
    const { name, arguments: args = {}, _meta } = params;
    const tool = registry.find(name);
    if (tool === undefined) {
      throw new JsonRpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}`);
    }
    let answer: Answer = isForwarded(tool)
      ? (result) => forwardedReply(request, result, version)
      : (result) => toolResult(request, result as CallToolResult, version);
    const task = tasks !== undefined && answersWithTask(request, version, tool);
    if (task) answer = answerAsTask(request, tasks!, auth, version, answer);
    let run: (context: ToolCallContext<A>) => Promise<Reply>;
    if (isForwarded(tool)) {
      const elicit = elicitations &&
        await urlElicitation(elicitations, request, params, auth, version);
      run = (context) => runForwarded(request, tool, args, context, answer, elicit);
    } else {
      const parsed = v.safeParse(tool.input, args);
      if (!parsed.success) {
        const result = errorResult(`Invalid arguments: ${describeIssues(parsed.issues)}`);
        return toolResult(request, result, version);
      }
      run = (context) => runTool(request, tool, parsed.output, context, answer);
    }
    const token = _meta?.progressToken;
    if (token === undefined || !_reportsProgress(tool)) {
      return await run({ auth, signal, task, progress: () => Promise.resolve() });
    }
    return {
      kind: "stream",
      run: (send) =>
        run({
          auth,
          signal,
          task,
          wantsProgress: true,
          progress: (progress, total, message) =>
            send(encodeMessage(progressNotification(token, progress, total, message))),
        }),
    };
  };

  const route = (
    request: JsonRpcRequest,
    context: DispatchContext<A>,
  ): Outcome | Promise<Outcome> => {
    const { method } = request;
    const { version, registry } = context;
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
        const result = reply(
          encodeResult(
            request.id,
            initializeResults.get(negotiateVersion(params.protocolVersion))!,
          ),
        );
        if (elicitations === undefined) return result;
        // The workspace keeps no session: what the client declared is kept for its later calls.
        return elicitations.remember(context.auth, declaresUrlMode(params.capabilities))
          .then(() => result);
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
        const json = serialized(page);
        return reply(encodeResult(request.id, isModern(version) ? json.modern : json.legacy));
      }
      case "tools/call":
        return callTool(request, _params(CallToolParamsSchema, request), context);
      case "tasks/get":
      case "tasks/update":
      case "tasks/cancel":
      case "tasks/result":
      case "tasks/list": {
        if (tasks === undefined) {
          throw new JsonRpcError(METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
        }
        return taskRequest(tasks, context.auth, request, version, options.onTask).then((result) =>
          reply(
            encodeResult(request.id, JSON.stringify(isModern(version) ? modern(result) : result)),
          )
        );
      }
      default:
        throw new JsonRpcError(METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
    }
  };

  return {
    // Not async: initialize, discover and tools/list are answered synchronously, and an async
    // wrapper would add a frame and a microtask to each of them.
    dispatch(request, context) {
      try {
        const outcome = route(request, context);
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

/** Forwarded tools may always report progress: the upstream decides. */
function _reportsProgress<A>(tool: AnyTool<A>): boolean {
  return isForwarded(tool) || tool.reportsProgress === true;
}
