/**
 * A workspace tool names the one scope it needs. tools/list shows every tool (the scope in
 * its description and in `_meta`) so an agent can tell its human what to grant; the
 * endpoint refuses a call whose scope the token lacks before the handler runs, reading the
 * tool's own typed `scope`.
 */
import * as v from "valibot";
import { type ForwardedTool, type Tool, type ToolAnnotations, ToolError } from "../../mcp/tool.ts";
import type { OwnedTaskHost } from "../../mcp/tasks.ts";
import type { Scope } from "../../oauth/scopes.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { AtomicCheck, Mutation } from "../../store/store.ts";
import type { NewAuditEntry } from "../domain/audit.ts";
import type { WorkspaceAuth } from "./bearer.ts";
import type { GateAction } from "../domain/gate_actions.ts";
import { type GateView, GateViewSchema } from "../domain/gate_record.ts";
import type { WorkspaceServices } from "../domain/services.ts";

export const SCOPE_META_KEY = "vestibule/scope";

/** A tool's argument naming one record (a workflow, a trigger, an approval…), described. */
export const IdInput = (what: string) =>
  v.pipe(v.string(), v.minLength(1), v.maxLength(100), v.description(what));

export interface WorkspaceTool<I, O> extends Tool<WorkspaceAuth, I, O> {
  readonly scope: Scope;
}

/** An upstream MCP server's tool in the workspace (src/gateway/upstream_tools.ts). */
export interface UpstreamWorkspaceTool extends ForwardedTool<WorkspaceAuth> {
  /** `upstream.<name>`, or the scope the upstreams file maps the tool to. */
  readonly scope: string;
}

/** Where the workspace gets the upstreams' tools (src/gateway/upstream_tools.ts answers). */
export interface UpstreamTools {
  /**
   * The caller's upstream tools in file order, each upstream's in its listing order, and a
   * stamp that changes whenever they may have; at once when nothing needs waiting for.
   */
  forCaller(auth: WorkspaceAuth): CallerTools | Promise<CallerTools>;
  /** The upstreams' own tasks, relayed (gateway/relayed_tasks.ts). */
  readonly tasks?: OwnedTaskHost<WorkspaceAuth>;
}

export interface CallerTools {
  readonly tools: readonly UpstreamWorkspaceTool[];
  readonly stamp: string;
}

/** Any of Vestibule's own workspace tools; the registry erases I and O. */
// deno-lint-ignore no-explicit-any
export type OwnWorkspaceTool = WorkspaceTool<any, any>;

/** Any workspace tool, own or an upstream's. */
export type AnyWorkspaceTool = OwnWorkspaceTool | UpstreamWorkspaceTool;

export function scopedTool<I, O>(tool: Omit<WorkspaceTool<I, O>, "meta">): WorkspaceTool<I, O> {
  return {
    ...tool,
    description: `${tool.description} Requires scope ${tool.scope}.`,
    meta: { [SCOPE_META_KEY]: tool.scope },
  };
}

/**
 * Gated writes only record a request for a human; the change happens on approval, so the
 * call itself destroys nothing, and each call makes a new request.
 */
const GATED: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
});

/**
 * What every gated tool returns: the pending approval and where the human decides. Its
 * outputSchema admits every status, so the approval as it ends (GateView), which a call answered
 * with a task (gate_tasks.ts) finally reads, is no result a client would refuse.
 */
export const PendingApprovalSchema = v.object({
  gateId: v.string(),
  status: v.picklist(["pending", "approved", "declined", "withdrawn"]),
  approvalUrl: v.string(),
  summary: v.pipe(v.string(), v.description("Exactly what approving would do.")),
});
export type PendingApproval = v.InferOutput<typeof PendingApprovalSchema>;

/**
 * A gated tool: its call records a pending approval of `action(args)` under the tool's own
 * name and scope (a request that cannot apply as it stands is an isError result).
 */
export function gatedTool<I>(
  services: WorkspaceServices,
  tool: Omit<WorkspaceTool<I, PendingApproval>, "meta" | "output" | "annotations" | "handler"> & {
    readonly action: (args: I) => GateAction;
  },
): WorkspaceTool<I, PendingApproval> {
  const { action, ...rest } = tool;
  return scopedTool({
    ...rest,
    output: PendingApprovalSchema,
    annotations: GATED,
    taskSupport: "optional",
    async handler(args, { auth }) {
      const result = await services.gates.request({
        businessId: auth.businessId,
        accountId: auth.accountId,
        clientId: auth.clientId,
        clientName: auth.clientName,
        tool: tool.name,
        scope: tool.scope,
        action: action(args),
      });
      if (!result.ok) throw new ToolError(result.reason);
      return pendingApproval(services.gates.view(result.gate));
    },
  });
}

/** A gated call's answer: the approval just recorded, and where the human decides. */
export function pendingApproval(view: GateView): PendingApproval {
  return {
    gateId: view.gateId,
    status: "pending",
    approvalUrl: view.approvalUrl,
    summary: view.summary,
  };
}

export { GateViewSchema };

/** Appends a changing tool call to the audit log. */
export async function auditCall(
  services: WorkspaceServices,
  auth: WorkspaceAuth,
  tool: string,
  summary: string,
): Promise<void> {
  await services.audit.append(_callEntry(auth, tool, summary));
}

function _callEntry(auth: WorkspaceAuth, tool: string, summary: string): NewAuditEntry {
  return {
    businessId: auth.businessId,
    accountId: auth.accountId,
    actor: "agent",
    clientId: auth.clientId,
    action: tool,
    summary,
    gateId: null,
  };
}

/** A direct write as planned from what it read: the writes, its audit line, its event. */
export interface DirectWrite<R> {
  /** The versions of the records the writes were computed from. */
  readonly checks: readonly AtomicCheck[];
  readonly mutations: readonly Mutation[];
  /** The audit entry's summary; null for a call that writes no record (a simulation). */
  readonly summary: string | null;
  /**
   * Its event (docs/integrating.md "Events"), `data` beside the caller's fields; null
   * for a change of the caller's own (their notification settings), which no business system acts on.
   */
  readonly event:
    | { readonly type: string; readonly data: Readonly<Record<string, unknown>> }
    | null;
  readonly result: R;
}

/**
 * Commits a direct write with its audit entry and its event, so neither is recorded without
 * the change nor the change without them; planned again from a fresh read when a record it
 * read (or the business's event queue) changed meanwhile.
 */
export async function commitCall<R>(
  services: WorkspaceServices,
  auth: WorkspaceAuth,
  tool: string,
  plan: () => Promise<DirectWrite<R>>,
): Promise<R> {
  return await retryCommit(async () => {
    const write = await plan();
    const events = write.event === null
      ? { checks: [], mutations: [] }
      : await services.events.record(auth.businessId, [{
        type: write.event.type,
        data: {
          businessId: auth.businessId,
          accountId: auth.accountId,
          clientId: auth.clientId,
          clientName: auth.clientName,
          tool,
          ...write.event.data,
        },
      }]);
    const audit = write.summary === null
      ? []
      : [services.audit.entry(_callEntry(auth, tool, write.summary))];
    const committed = await services.workspace.store.commit(
      [...write.checks, ...events.checks],
      [...write.mutations, ...audit, ...events.mutations],
    );
    if (!committed) return RETRY;
    if (write.event !== null) services.events.dispatch();
    return write.result;
  });
}
