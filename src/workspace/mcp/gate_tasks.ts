/**
 * Gated calls as MCP tasks (src/mcp/tasks.ts): the task is the gate its call recorded, read
 * back as a task. Its id is the gate's id (random, unguessable); the gate is committed before
 * the answer goes out, in the business's store, so any replica reads it at once and nothing else
 * needs keeping. A task belongs to the account and client of the token that asked, in that
 * business: anyone else, an owner of the same business included, finds no such task.
 * The first answer to report a task's end marks it (`["ws", businessId, "task_end", gateId]`), so
 * that the metrics count each end once, on whichever replica.
 */
import type { TaskHost, TaskState } from "../../mcp/tasks.ts";
import { errorResult } from "../../mcp/tool.ts";
import type { WorkspaceAuth } from "./bearer.ts";
import type { Gate } from "../domain/gate_record.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import type { Store } from "../../store/store.ts";

/** How often a client is told to look again: a person decides in minutes, not milliseconds. */
const POLL_INTERVAL_MS = 5_000;

export function createGateTasks(
  services: WorkspaceServices,
  store: Store,
  now: () => number,
): TaskHost<WorkspaceAuth> {
  const { gates } = services;

  const reported = async (gate: Gate, state: TaskState): Promise<TaskState> => {
    if (state.status === "working") return state;
    const key = ["ws", gate.businessId, "task_end", gate.id];
    if (await store.get(key) !== null) return state;
    const first = await store.commit([{ key, version: null }], [{ type: "set", key, value: 1 }]);
    return first ? { ...state, firstEnd: true } : state;
  };

  const mine = async (auth: WorkspaceAuth, taskId: string): Promise<Gate | null> => {
    const gate = await gates.get(taskId);
    return gate !== null && gate.businessId === auth.businessId &&
        gate.requestedBy === auth.accountId && gate.clientId === auth.clientId
      ? gate
      : null;
  };

  const stateOf = async (gate: Gate): Promise<TaskState> => {
    const base = { taskId: gate.id, createdAt: gate.createdAt };
    const decidedAt = gate.decidedAt ?? gate.createdAt;
    const refused = (message: string, at: number): TaskState => ({
      ...base,
      status: "refused",
      statusMessage: message,
      lastUpdatedAt: at,
      result: errorResult(message),
    });
    const expiresAt = "expiresAt" in gate.action ? gate.action.expiresAt : null;
    switch (gate.status) {
      case "pending":
        if (expiresAt !== null && now() > expiresAt) {
          return refused(
            `No owner decided by ${
              _iso(expiresAt)
            }: the approval expired and the call was not made`,
            expiresAt,
          );
        }
        return {
          ...base,
          status: "working",
          statusMessage: `Waiting for an owner of the business to approve or decline at ${
            gates.approvalUrl(gate.id)
          }${expiresAt === null ? "" : `, by ${_iso(expiresAt)}`}: ${gate.summary}`,
          lastUpdatedAt: gate.createdAt,
        };
      case "declined":
        return refused("An owner declined it; nothing was done", decidedAt);
      case "withdrawn":
        return {
          ...base,
          status: "cancelled",
          statusMessage: "Withdrawn by this client before an owner decided; nothing was done",
          lastUpdatedAt: decidedAt,
        };
      case "approved":
        return await approved(gate, decidedAt);
    }
  };

  const approved = async (gate: Gate, decidedAt: number): Promise<TaskState> => {
    const base = { taskId: gate.id, createdAt: gate.createdAt, lastUpdatedAt: decidedAt };
    const outcome = gate.outcome ?? "Approved";
    if (gate.action.type === "call_upstream") {
      const result = await gates.result(gate);
      if (result !== null) {
        return { ...base, status: "completed", statusMessage: outcome, result };
      }
      if (gate.applied && !gate.failed) {
        return { ...base, status: "working", statusMessage: "Approved; the call is being made" };
      }
      return {
        ...base,
        status: "completed",
        statusMessage: outcome,
        result: errorResult(outcome),
      };
    }
    const view = await gates.fullView(gate);
    return {
      ...base,
      status: "completed",
      statusMessage: outcome,
      result: {
        content: [{ type: "text", text: JSON.stringify(view) }],
        structuredContent: view,
        ...(gate.applied ? {} : { isError: true }),
      },
    };
  };

  return {
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
    async taskOf(auth, result) {
      const answer = result["structuredContent"] as Record<string, unknown> | undefined;
      if (answer?.["status"] !== "pending" || typeof answer["gateId"] !== "string") return null;
      const gate = await mine(auth, answer["gateId"]);
      return gate === null ? null : await stateOf(gate);
    },
    async get(auth, taskId) {
      const gate = await mine(auth, taskId);
      return gate === null ? null : await reported(gate, await stateOf(gate));
    },
    async cancel(auth, taskId) {
      const gate = await mine(auth, taskId);
      return gate === null ? null : await reported(gate, await stateOf(await gates.withdraw(gate)));
    },
    async list(auth) {
      const listed = await gates.list(auth.businessId);
      const own = listed.filter((gate) =>
        gate.requestedBy === auth.accountId && gate.clientId === auth.clientId
      );
      return await Promise.all(own.map(stateOf));
    },
  };
}

function _iso(ms: number): string {
  return new Date(ms).toISOString();
}
