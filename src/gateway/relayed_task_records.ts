// The store records of relayed tasks (relayed_tasks.ts): one per task under the business, the
// account and the client of the token that asked, any replica's to serve; the task's state as
// the agent reads it; and its end, recorded once (the commit checks the record's version) with
// its result kept in parts and its audit entry.
import type { TaskState } from "../mcp/tasks.ts";
import { errorResult } from "../mcp/tool.ts";
import type { Store } from "../store/store.ts";
import { readResultParts, storeGateResult } from "../workspace/domain/gate_results.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import type { NewAuditEntry } from "../workspace/domain/audit.ts";
import { servedToolName } from "../config/upstreams.ts";

export interface Relayed {
  readonly upstream: string;
  readonly tool: string;
  /** Null: the upstream answered at once; the task was created already ended. */
  readonly upstreamTaskId: string | null;
  readonly status: TaskState["status"];
  readonly statusMessage: string;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** The parts of the kept result (gate_results.ts), once ended with one. */
  readonly resultParts?: number;
}

/** A record as read, with the version its end is committed against. */
export interface RelayedEntry {
  readonly value: Relayed;
  readonly version: string;
}

export type EndStatus = Exclude<TaskState["status"], "working">;

/** Every relayed task's id starts so; a gate's id is a bare UUID. */
export const ID_PREFIX = "relayed-";

const END_WORDS: Readonly<Record<EndStatus, string>> = {
  completed: "completed",
  refused: "failed",
  cancelled: "cancelled",
};

export class RelayedTaskRecords {
  readonly store: Store;
  readonly now: () => number;
  /** Gathers an audit entry, written behind the answer (call_audit.ts). */
  readonly audit: (entry: NewAuditEntry) => Promise<void>;

  constructor(
    store: Store,
    now: () => number,
    audit: (entry: NewAuditEntry) => Promise<void>,
  ) {
    this.store = store;
    this.now = now;
    this.audit = audit;
  }

  /** Keeps a new task's record; the entry as stored. */
  async create(auth: WorkspaceAuth, taskId: string, record: Relayed): Promise<RelayedEntry> {
    const key = _key(auth, taskId);
    await this.store.set(key, record, { expireIn: record.ttlMs });
    return (await this.store.get<Relayed>(key))!;
  }

  /** The caller's task of that id; null for another caller's, or an id not relayed. */
  async read(auth: WorkspaceAuth, taskId: string): Promise<RelayedEntry | null> {
    return taskId.startsWith(ID_PREFIX) ? await this.store.get<Relayed>(_key(auth, taskId)) : null;
  }

  /** The caller's tasks, newest first. */
  async list(auth: WorkspaceAuth): Promise<TaskState[]> {
    const prefix = _key(auth, "").slice(0, -1);
    const states: TaskState[] = [];
    for await (const entry of this.store.list<Relayed>(prefix)) {
      states.push(await this.state(auth, String(entry.key.at(-1)), entry.value));
    }
    return states.sort((a, b) => b.createdAt - a.createdAt);
  }

  /** The task as the agent reads it, with its kept result once it ended with one. */
  async state(
    auth: WorkspaceAuth,
    taskId: string,
    record: Relayed,
    firstEnd = false,
  ): Promise<TaskState> {
    const kept = record.resultParts === undefined ? undefined : await readResultParts(
      this.store,
      { businessId: auth.businessId, id: taskId },
      record.resultParts,
    );
    const result = kept ??
      (record.status === "refused" ? errorResult(record.statusMessage) : undefined);
    return {
      taskId,
      status: record.status,
      statusMessage: record.statusMessage,
      createdAt: record.createdAt,
      lastUpdatedAt: record.lastUpdatedAt,
      ttlMs: record.ttlMs,
      pollIntervalMs: record.pollIntervalMs,
      ...(result === undefined ? {} : { result }),
      ...(firstEnd ? { firstEnd } : {}),
    };
  }

  /** Records the end once (the record's version is checked); the state as it then stands. */
  async end(
    auth: WorkspaceAuth,
    taskId: string,
    entry: RelayedEntry,
    status: EndStatus,
    statusMessage: string,
    result?: Readonly<Record<string, unknown>>,
  ): Promise<TaskState> {
    const { store, now } = this;
    // The result's parts go with the task (a minute's grace for whoever is reading it).
    const expireIn = Math.max(entry.value.createdAt + entry.value.ttlMs - now(), 60_000);
    const owner = { businessId: auth.businessId, id: taskId };
    const parts = result === undefined
      ? undefined
      : await storeGateResult(store, owner, result, expireIn);
    const record: Relayed = {
      ...entry.value,
      status,
      statusMessage,
      lastUpdatedAt: now(),
      ...(parts === undefined ? {} : { resultParts: parts }),
    };
    const key = _key(auth, taskId);
    const ended = await store.commit([{ key, version: entry.version }], [
      { type: "set", key, value: record, expireIn },
    ]);
    if (ended) {
      await this.audit({
        businessId: auth.businessId,
        accountId: auth.accountId,
        actor: "agent",
        clientId: auth.clientId,
        action: servedToolName(record.upstream, record.tool),
        summary: `Relayed task ${taskId} ${END_WORDS[status]}: ${statusMessage}`,
        gateId: null,
      });
      return await this.state(auth, taskId, record, true);
    }
    // Another replica recorded the end first: its record stands.
    const current = await store.get<Relayed>(key);
    return await this.state(auth, taskId, current?.value ?? record);
  }
}

function _key(auth: WorkspaceAuth, taskId: string): string[] {
  return ["ws", auth.businessId, "relayed_task", auth.accountId, auth.clientId, taskId];
}
