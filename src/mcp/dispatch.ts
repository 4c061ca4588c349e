// Pure dispatch: one decoded JSON-RPC request, in the revision it speaks, in; one outcome out
// (outcomes.ts). Knows nothing of HTTP; the transport decides how an outcome travels (JSON or an
// event stream). tools/call is tool_calls.ts. The revisions differ only in dispatch, as data and
// small branches: which methods exist, and what a 2026-07-28 result carries besides the common
// fields (resultType, serverInfo: outcomes.ts; caching hints: here).
import * as v from "valibot";
import type { LogSink } from "../http/request_log.ts";
import { describeIssues } from "../issue_words.ts";
import { encodeResult } from "./codec.ts";
import { INVALID_PARAMS, JsonRpcError, METHOD_NOT_FOUND } from "./errors.ts";
import { declaresUrlMode, type UrlElicitations } from "./elicitation.ts";
import {
  type CacheScope,
  CallToolParamsSchema,
  type DiscoverResult,
  InitializeParamsSchema,
  type InitializeResult,
  type JsonRpcRequest,
  ListToolsParamsSchema,
  ParamsSchema,
} from "./messages.ts";
import {
  type DispatchContext,
  errorReply,
  ModernResults,
  type Outcome,
  reply,
} from "./outcomes.ts";
import type { ToolPage } from "./registry.ts";
import {
  LEGACY_TASKS_CAPABILITY,
  LEGACY_TASKS_VERSION,
  MODERN_TASKS_CAPABILITY,
  TASK_METHODS,
  type TaskHost,
  type TaskMetricState,
  taskRequest,
} from "./tasks.ts";
import { createToolCalls } from "./tool_calls.ts";
import {
  isModern,
  LEGACY_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSION,
  negotiateVersion,
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
  const results = new ModernResults(serverInfo);
  const callTool = createToolCalls({ log, results, tasks, onTask: options.onTask, elicitations });
  const cacheHints = { ttlMs: options.cache.ttlMs, cacheScope: options.cache.scope };
  const discoverResult: DiscoverResult = results.of({
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
        modern: JSON.stringify(results.of({ ...page, ...cacheHints })),
      };
      pageJson.set(page, json);
    }
    return json;
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
            encodeResult(
              request.id,
              JSON.stringify(isModern(version) ? results.of(result) : result),
            ),
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
          ? outcome.catch((error: unknown) => errorReply(log, request, error))
          : Promise.resolve(outcome);
      } catch (error) {
        return Promise.resolve().then(() => errorReply(log, request, error));
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
