/**
 * Upstream tasks relayed (2025-11-25 experimental tasks). A call the agent made as a task, of a
 * tool its upstream lists with `execution.taskSupport`, goes to the upstream as a task; the
 * upstream's task becomes a Vestibule task of its own id, whose status follows the upstream's
 * (each tasks/get asks the upstream), whose result is the upstream's, whose cancel reaches it.
 *
 * What ties the two is one store record (relayed_task_records.ts) under the business, the
 * account and the client of the token that asked
 * (`["ws", businessId, "relayed_task", accountId, clientId, taskId]`): any replica serves it, and
 * another caller's lookup finds nothing. It is written before the answer goes out, and once more
 * when the task ends (a commit that checks the version, so one replica records the end: it keeps
 * the result, in parts as an approved call's, counts it, and writes the audit entry of the end).
 *
 * The gateway answers no request of an upstream's (rpc_channel.ts): an upstream task that waits
 * for its caller's input (`input_required`) is cancelled there and ends refused, in words.
 */
import * as v from "valibot";
import type { OwnedTaskHost, TaskState } from "../mcp/tasks.ts";
import { errorResult, type ForwardedResult } from "../mcp/tool.ts";
import type { Store } from "../store/store.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import type { NewAuditEntry } from "../workspace/domain/audit.ts";
import { type UpstreamAnswer, UpstreamError } from "./mcp_client.ts";
import {
  type EndStatus,
  ID_PREFIX,
  type Relayed,
  type RelayedEntry,
  RelayedTaskRecords,
} from "./relayed_task_records.ts";
import type { LiveUpstream, UpstreamSet } from "./upstream_set.ts";

/** The `_meta` key that ties a result to its task (2025-11-25). */
const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** How long a task is kept when its upstream keeps it for ever, and the most it is kept. */
const MAX_KEEP_MS = 7 * 24 * 60 * 60 * 1000;
/** The poll interval when the upstream names none, and its bounds (never a tight loop). */
const POLL_MS = 5_000;
const MIN_POLL_MS = 1_000;
const MAX_POLL_MS = 10 * 60 * 1000;
/** What marks a forwarded result as the answer that started a relayed task (never serialized). */
const STARTED = Symbol("relayed task");

type Result = Readonly<Record<string, unknown>>;

/** 2025-11-25 Task, as much of it as is relayed. */
const UpstreamTaskSchema = v.object({
  taskId: v.pipe(v.string(), v.minLength(1), v.maxLength(500)),
  status: v.string(),
  statusMessage: v.optional(v.string()),
  ttl: v.optional(v.nullable(v.number())),
  pollInterval: v.optional(v.number()),
});

export interface RelayedTasks extends OwnedTaskHost<WorkspaceAuth> {
  /**
   * Keeps the task an upstream call started, or the result it answered at once, as a task of
   * the caller's: its id, and the result to answer with (the dispatcher reads it as the task).
   */
  start(
    auth: WorkspaceAuth,
    upstream: LiveUpstream,
    tool: string,
    answered: ForwardedResult & { readonly task?: Result },
  ): Promise<{ readonly taskId: string | null; readonly answer: ForwardedResult }>;
}

export interface RelayedTasksDeps {
  readonly store: Store;
  readonly upstreams: UpstreamSet;
  readonly now: () => number;
  /** Gathers an audit entry, written behind the answer (call_audit.ts). */
  readonly audit: (entry: NewAuditEntry) => Promise<void>;
}

export function createRelayedTasks(deps: RelayedTasksDeps): RelayedTasks {
  const { upstreams, now } = deps;
  const records = new RelayedTaskRecords(deps.store, now, deps.audit);

  return {
    ttlMs: MAX_KEEP_MS,
    pollIntervalMs: POLL_MS,
    owns: (taskId) => taskId.startsWith(ID_PREFIX),
    async start(auth, upstream, tool, answered) {
      const taskId = `${ID_PREFIX}${crypto.randomUUID()}`;
      const { title } = upstream.config;
      const at = now();
      const parsed = answered.task === undefined
        ? null
        : v.safeParse(UpstreamTaskSchema, answered.task);
      if (parsed !== null && !parsed.success) {
        return {
          taskId: null,
          answer: errorResult(`${title} answered the call with a task that is not one`),
        };
      }
      const task = parsed?.output;
      const ttlMs = typeof task?.ttl === "number" ? Math.min(task.ttl, MAX_KEEP_MS) : MAX_KEEP_MS;
      const record: Relayed = {
        upstream: upstream.config.name,
        tool,
        upstreamTaskId: task?.taskId ?? null,
        status: "working",
        statusMessage: `${title} started the task`,
        createdAt: at,
        lastUpdatedAt: at,
        ttlMs,
        pollIntervalMs: Math.min(Math.max(task?.pollInterval ?? POLL_MS, MIN_POLL_MS), MAX_POLL_MS),
      };
      const entry = await records.create(auth, taskId, record);
      // An upstream that answered at once: the task is its answer, already ended.
      const state = task === undefined
        ? await records.end(
          auth,
          taskId,
          entry,
          answered.isError === true ? "refused" : "completed",
          `${title} answered at once`,
          answered,
        )
        : await records.state(auth, taskId, record);
      return { taskId, answer: { content: [], [STARTED]: state } };
    },
    taskOf(_auth, result) {
      return Promise.resolve((result as { [STARTED]?: TaskState })[STARTED] ?? null);
    },
    async get(auth, taskId) {
      const entry = await records.read(auth, taskId);
      if (entry === null) return null;
      if (entry.value.status !== "working") return await records.state(auth, taskId, entry.value);
      return await _follow(records, upstreams, auth, taskId, entry);
    },
    async cancel(auth, taskId) {
      const entry = await records.read(auth, taskId);
      if (entry === null) return null;
      const record = entry.value;
      if (record.status !== "working") return await records.state(auth, taskId, record);
      const ask = upstreams.get(record.upstream)?.taskRequest;
      const upstreamId = record.upstreamTaskId;
      const follow = () => _follow(records, upstreams, auth, taskId, entry);
      // Not followed any more: follow ends it, saying why.
      if (ask === undefined || upstreamId === null) return await follow();
      const answer = await _reach(() => ask("tasks/cancel", upstreamId));
      // Refused (it ended meanwhile, say) or not reached: how it stands decides.
      if (typeof answer === "string" || "error" in answer) return await follow();
      return await records.end(
        auth,
        taskId,
        entry,
        "cancelled",
        `Cancelled by this client; ${_titleOf(upstreams, record)} was told and cancelled its task`,
      );
    },
    list: (auth) => records.list(auth),
  };
}

/** Asks the upstream how its task stands; ends ours when it ended. */
async function _follow(
  records: RelayedTaskRecords,
  upstreams: UpstreamSet,
  auth: WorkspaceAuth,
  taskId: string,
  entry: RelayedEntry,
): Promise<TaskState> {
  const record = entry.value;
  const title = _titleOf(upstreams, record);
  const end = (status: EndStatus, message: string, result?: Result) =>
    records.end(auth, taskId, entry, status, message, result);
  /** How it stands now, said in `statusMessage`: not an end. */
  const standing = (statusMessage: string) =>
    records.state(auth, taskId, { ...record, statusMessage });
  const live = upstreams.get(record.upstream);
  if (live?.taskRequest === undefined || record.upstreamTaskId === null) {
    return await end(
      "refused",
      `${title} is no longer served by this gateway: its task cannot be followed`,
    );
  }
  const ask = live.taskRequest;
  const upstreamId = record.upstreamTaskId;
  const answer = await _reach(() => ask("tasks/get", upstreamId));
  if (typeof answer === "string") {
    // Unreachable now is not an end: the agent asks again.
    return await standing(
      `${title} could not be asked how the task stands (${answer}); ask again later`,
    );
  }
  if ("error" in answer) {
    return await end(
      "refused",
      `${title} no longer knows the task (${answer.error.message}): its result is lost`,
    );
  }
  const parsed = v.safeParse(UpstreamTaskSchema, answer.result);
  if (!parsed.success) return await end("refused", `${title} answered tasks/get with no task`);
  const task = parsed.output;
  const said = task.statusMessage === undefined ? "" : `: ${task.statusMessage}`;
  switch (task.status) {
    case "working":
      return await standing(`${title} is working on it${said}`);
    case "input_required":
      await _reach(() => ask("tasks/cancel", upstreamId));
      return await end(
        "refused",
        `${title} asked for input during the task (input_required); the gateway relays no request of an upstream to its caller, so it cancelled the task there${said}`,
      );
    case "cancelled":
      return await end("cancelled", `${title} cancelled the task${said}`);
    case "completed":
    case "failed": {
      const got = await _reach(() => ask("tasks/result", upstreamId));
      if (typeof got === "string") {
        return await standing(
          `${title} ended the task; its result could not be read yet (${got})`,
        );
      }
      const ok = "result" in got && Array.isArray(got.result["content"]);
      const result = ok ? _unrelated(got.result) : errorResult(
        `${title} ${task.status} the task${said}` +
          ("error" in got ? `; its result: ${got.error.message}` : ""),
      );
      const refused = task.status === "failed" || result["isError"] === true;
      return await end(
        refused ? "refused" : "completed",
        `${title} ${task.status === "failed" ? "failed" : "completed"} the task${said}`,
        result,
      );
    }
    default:
      return await end(
        "refused",
        `${title} answered tasks/get with the unknown status ${JSON.stringify(task.status)}`,
      );
  }
}

function _titleOf(upstreams: UpstreamSet, record: Relayed): string {
  return upstreams.get(record.upstream)?.config.title ?? record.upstream;
}

/** The upstream's result without its tie to the upstream's task id, which is not the agent's. */
function _unrelated(result: Result): Result {
  const meta = result["_meta"];
  if (typeof meta !== "object" || meta === null || !(RELATED_TASK in meta)) return result;
  const { [RELATED_TASK]: _upstreams, ...rest } = meta as Record<string, unknown>;
  const { _meta: _, ...body } = result;
  return Object.keys(rest).length === 0 ? body : { ...body, _meta: rest };
}

/** The upstream's answer, or why it could not be had (unreachable, too slow…), in words. */
async function _reach(ask: () => Promise<UpstreamAnswer>): Promise<UpstreamAnswer | string> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof UpstreamError) return error.message;
    throw error;
  }
}
