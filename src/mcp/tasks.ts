// Tasks: a tools/call answered with a handle the client polls instead of the result. Two
// revisions, one meaning: 2025-11-25's experimental tasks (the `task` param of tools/call,
// tasks/get, tasks/result, tasks/list, tasks/cancel) and 2026-07-28's tasks extension
// (io.modelcontextprotocol/tasks: `resultType: "task"`, tasks/get with the result inlined,
// tasks/update, tasks/cancel). Protocol only: the endpoint's TaskHost says which answers
// become tasks and what state each task is in; this module says how that reads on the wire.
import * as v from "valibot";
import {
  INVALID_PARAMS,
  JsonRpcError,
  METHOD_NOT_FOUND,
  MISSING_REQUIRED_CLIENT_CAPABILITY,
} from "./errors.ts";
import { describeIssues } from "../issue_words.ts";
import { type JsonRpcRequest, META } from "./messages.ts";
import { isModern, type ProtocolVersion } from "./versions.ts";
import { type AnyTool, isForwarded } from "./tool.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** 2025-11-25: the key of `_meta` that ties a message to its task. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** The legacy revision that has tasks (2025-06-18 has none). */
const LEGACY_TASKS_VERSION = "2025-11-25";

type Result = Readonly<Record<string, unknown>>;

/**
 * A task as the host sees it. `refused` is a call that ended without being made (declined,
 * expired): 2026-07-28 reads it as `completed` with its isError result (tasks.md "Task
 * Execution Errors"), 2025-11-25 as `failed`.
 */
export interface TaskState {
  readonly taskId: string;
  readonly status: "working" | "completed" | "refused" | "cancelled";
  readonly statusMessage: string;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /** The call's result, for completed and refused. */
  readonly result?: Result;
  /** This task's own TTL and poll interval (a relayed upstream task's); the host's otherwise. */
  readonly ttlMs?: number | null;
  readonly pollIntervalMs?: number;
  /** This answer is the first to report the task's end: the metrics count the end once. */
  readonly firstEnd?: boolean;
}

/**
 * The states the operator's metrics count tasks entering (a bounded label): `working` when a
 * call is answered with a task, an end when it is first reported (`failed`: refused).
 */
export type TaskMetricState = "working" | "completed" | "failed" | "cancelled";
export const TASK_METRIC_STATES: readonly TaskMetricState[] = [
  "working",
  "completed",
  "failed",
  "cancelled",
];
type OnTask = (state: TaskMetricState) => void;

export interface TaskHost<A> {
  /** The task a tool call's answer started, or null when the answer is final. */
  taskOf(auth: A, result: Result): Promise<TaskState | null>;
  /** Null for a task that is not there for this caller (unknown, or someone else's). */
  get(auth: A, taskId: string): Promise<TaskState | null>;
  /** The task after the withdrawal, or null as for get; a task already ended is unchanged. */
  cancel(auth: A, taskId: string): Promise<TaskState | null>;
  /** The caller's tasks, newest first (2025-11-25 tasks/list; one page). */
  list(auth: A): Promise<readonly TaskState[]>;
  /** How long a task is kept (null: as long as its business); never shorter than it may wait. */
  readonly ttlMs: number | null;
  readonly pollIntervalMs: number;
}

/** A host of some tasks only: those whose ids it owns, and the answers it marks as its own. */
export interface OwnedTaskHost<A> extends TaskHost<A> {
  owns(taskId: string): boolean;
}

/** One endpoint's tasks from two hosts: `owned` answers for its ids, `rest` for any other. */
export function joinTaskHosts<A>(rest: TaskHost<A>, owned: OwnedTaskHost<A>): TaskHost<A> {
  const of = (taskId: string) => owned.owns(taskId) ? owned : rest;
  return {
    ttlMs: rest.ttlMs,
    pollIntervalMs: rest.pollIntervalMs,
    taskOf: async (auth, result) =>
      await owned.taskOf(auth, result) ?? await rest.taskOf(auth, result),
    get: (auth, taskId) => of(taskId).get(auth, taskId),
    cancel: (auth, taskId) => of(taskId).cancel(auth, taskId),
    async list(auth) {
      const [some, others] = await Promise.all([rest.list(auth), owned.list(auth)]);
      return [...some, ...others].sort((a, b) => b.createdAt - a.createdAt);
    },
  };
}

/**
 * Whether a tools/call of `tool` is answered with a task when it starts one: the client asked
 * for a task (2025-11-25; -32601 for a tool that cannot be one) or accepts one (2026-07-28), and
 * the tool may create one. A tool that must be one (a relayed upstream tool's "required") is
 * refused to a client that did not ask: -32601 (2025-11-25 "Tool-Level Negotiation"), or -32021
 * naming the extension (2026-07-28 tasks.md).
 */
export function answersWithTask<A>(
  request: JsonRpcRequest,
  version: ProtocolVersion,
  tool: AnyTool<A>,
): boolean {
  const support = isForwarded(tool) ? tool.definition.execution?.taskSupport : tool.taskSupport;
  if (!_wantsTask(request, version)) {
    if (support === "required") throw _taskRequired(tool.name, version);
    return false;
  }
  if (support === "optional" || support === "required") return true;
  if (isModern(version)) return false;
  throw new JsonRpcError(
    METHOD_NOT_FOUND,
    `The tool ${
      JSON.stringify(tool.name)
    } cannot be called as a task (its execution.taskSupport is forbidden); call it without params.task`,
  );
}

/**
 * What a task-capable call's result becomes: the CreateTaskResult of the task it started, or null
 * to answer the result as it is (2026-07-28). In 2025-11-25 the client asked for a task, so a call
 * that started none (its arguments refused, say) is -32602 with the result's text.
 */
export async function taskAnswer<A>(
  host: TaskHost<A>,
  auth: A,
  result: Result,
  version: ProtocolVersion,
  onTask?: OnTask,
): Promise<Result | null> {
  const task = await host.taskOf(auth, result);
  if (task !== null) {
    onTask?.("working");
    _countEnd(task, onTask);
    return isModern(version)
      ? { resultType: "task", ..._modernTask(host, task) }
      : { task: _legacyTask(host, task) };
  }
  if (isModern(version)) return null;
  const content = result["content"] as readonly { type?: string; text?: string }[];
  const text = content.find((block) => block.type === "text")?.text ?? "the call failed";
  throw new JsonRpcError(INVALID_PARAMS, text);
}

function _wantsTask(request: JsonRpcRequest, version: ProtocolVersion): boolean {
  if (isModern(version)) return _declaresTasks(request);
  if (version !== LEGACY_TASKS_VERSION || request.params?.["task"] === undefined) return false;
  const parsed = v.safeParse(TaskParamSchema, request.params["task"]);
  if (!parsed.success) {
    throw new JsonRpcError(
      INVALID_PARAMS,
      `Invalid params: ${describeIssues(parsed.issues, "params.task")}`,
    );
  }
  return true;
}

/** 2025-11-25 TaskMetadata: the TTL the client would like (ours is never shorter). */
const TaskParamSchema = v.object({ ttl: v.optional(v.pipe(v.number(), v.minValue(0))) });

/** The capabilities that say so: 2025-11-25 `initialize`, 2026-07-28 `server/discover`. */
export const LEGACY_TASKS_CAPABILITY = Object.freeze({
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
});
export const MODERN_TASKS_CAPABILITY = Object.freeze({ [TASKS_EXTENSION]: {} });
export { LEGACY_TASKS_VERSION };

/** The methods of tasks in each revision (others are -32601 there). */
export const TASK_METHODS: ReadonlySet<string> = new Set([
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
  "tasks/result",
  "tasks/list",
]);
const MODERN_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);
const LEGACY_METHODS = new Set(["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"]);

/**
 * Answers a tasks/* request: the result object (the dispatcher adds what every result of the
 * revision carries), or a JsonRpcError.
 */
export async function taskRequest<A>(
  host: TaskHost<A>,
  auth: A,
  request: JsonRpcRequest,
  version: ProtocolVersion,
  onTask?: OnTask,
): Promise<Result> {
  const { method } = request;
  const modern = isModern(version);
  if (
    !(modern ? MODERN_METHODS : LEGACY_METHODS).has(method) ||
    (!modern && version !== LEGACY_TASKS_VERSION)
  ) {
    throw new JsonRpcError(
      METHOD_NOT_FOUND,
      `Method not found: ${JSON.stringify(method)} is not part of MCP ${version}`,
    );
  }
  if (modern && !_declaresTasks(request)) {
    throw new JsonRpcError(
      MISSING_REQUIRED_CLIENT_CAPABILITY,
      `Missing required client capability: ${method} needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  if (method === "tasks/list") {
    return { tasks: (await host.list(auth)).map((task) => _legacyTask(host, task)) };
  }
  const taskId = _taskId(request);
  if (method === "tasks/cancel") {
    const before = await host.get(auth, taskId);
    if (before === null) throw _notFound(taskId);
    // 2026-07-28 acknowledges a cancel however the task stands (tasks.md: cancelling is
    // eventually consistent, the task may end otherwise); 2025-11-25 refuses one that ended.
    if (before.status !== "working") {
      if (modern) return {};
      throw new JsonRpcError(
        INVALID_PARAMS,
        `Cannot cancel task ${taskId}: it has already ended (${
          _wireStatus(before, version)
        }); tasks/get reads how`,
      );
    }
    const after = await host.cancel(auth, taskId) ?? before;
    _countEnd(after, onTask);
    return modern ? {} : _legacyTask(host, after);
  }
  const task = await host.get(auth, taskId);
  if (task === null) throw _notFound(taskId);
  _countEnd(task, onTask);
  switch (method) {
    case "tasks/update":
      throw new JsonRpcError(
        INVALID_PARAMS,
        `Invalid params: task ${taskId} asks for no input (it waits for a person's decision, not for the client); poll it with tasks/get`,
      );
    case "tasks/result": {
      if (task.result === undefined) {
        throw new JsonRpcError(
          INVALID_PARAMS,
          `Task ${taskId} has no result yet (${
            _wireStatus(task, version)
          }); poll tasks/get until it has ended`,
        );
      }
      const meta = task.result["_meta"];
      return {
        ...task.result,
        _meta: { ...(typeof meta === "object" ? meta : {}), [RELATED_TASK]: { taskId } },
      };
    }
    default:
      if (!modern) return _legacyTask(host, task);
      return {
        ..._modernTask(host, task),
        ...(task.result === undefined ? {} : { result: task.result }),
      };
  }
}

function _taskRequired(name: string, version: ProtocolVersion): JsonRpcError {
  const what = `The tool ${JSON.stringify(name)} runs only as a task`;
  if (isModern(version)) {
    return new JsonRpcError(
      MISSING_REQUIRED_CLIENT_CAPABILITY,
      `Missing required client capability: ${what}; declare the ${TASKS_EXTENSION} extension in the request's client capabilities`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  return new JsonRpcError(
    METHOD_NOT_FOUND,
    version === LEGACY_TASKS_VERSION
      ? `${what} (its execution.taskSupport is required); call it with params.task`
      : `${what}, which MCP ${version} does not have; use MCP ${LEGACY_TASKS_VERSION} or later`,
  );
}

function _countEnd(task: TaskState, onTask: OnTask | undefined): void {
  if (task.firstEnd !== true || task.status === "working") return;
  onTask?.(task.status === "refused" ? "failed" : task.status);
}

function _declaresTasks(request: JsonRpcRequest): boolean {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const capabilities = meta?.[META.clientCapabilities] as Record<string, unknown> | undefined;
  const extensions = capabilities?.["extensions"] as Record<string, unknown> | undefined;
  const declared = extensions?.[TASKS_EXTENSION];
  return typeof declared === "object" && declared !== null;
}

function _taskId(request: JsonRpcRequest): string {
  const taskId = request.params?.["taskId"];
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 200) {
    throw new JsonRpcError(
      INVALID_PARAMS,
      "Invalid params: params.taskId must be the taskId a tools/call answered with",
    );
  }
  return taskId;
}

function _notFound(taskId: string): JsonRpcError {
  return new JsonRpcError(
    INVALID_PARAMS,
    `Failed to retrieve task: no task ${JSON.stringify(taskId)} for this client`,
  );
}

function _wireStatus(task: TaskState, version: ProtocolVersion): string {
  if (task.status !== "refused") return task.status;
  return isModern(version) ? "completed" : "failed";
}

function _modernTask<A>(host: TaskHost<A>, task: TaskState): Result {
  return {
    taskId: task.taskId,
    status: _wireStatus(task, "2026-07-28"),
    statusMessage: task.statusMessage,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: task.ttlMs === undefined ? host.ttlMs : task.ttlMs,
    pollIntervalMs: task.pollIntervalMs ?? host.pollIntervalMs,
  };
}

function _legacyTask<A>(host: TaskHost<A>, task: TaskState): Result {
  return {
    taskId: task.taskId,
    status: _wireStatus(task, LEGACY_TASKS_VERSION),
    statusMessage: task.statusMessage,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttl: task.ttlMs === undefined ? host.ttlMs : task.ttlMs,
    pollInterval: task.pollIntervalMs ?? host.pollIntervalMs,
  };
}
