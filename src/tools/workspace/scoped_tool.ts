/**
 * A workspace tool names the one scope it needs. tools/list shows every tool (the scope in
 * its description and in `_meta`) so an agent can tell its human what to grant; the
 * endpoint refuses a call whose scope the token lacks before the handler runs.
 */
import * as v from "valibot";
import { type AnyTool, type Tool, type ToolAnnotations, ToolError } from "../../mcp/tool.ts";
import { getGrant } from "../../oauth/grants.ts";
import type { Scope } from "../../oauth/scopes.ts";
import type { WorkspaceAuth } from "../../workspace/bearer.ts";
import type { GateAction } from "../../workspace/gate_actions.ts";
import { type GateView, GateViewSchema } from "../../workspace/gates.ts";
import type { WorkspaceServices } from "../../workspace/services.ts";

export const SCOPE_META_KEY = "vestibule/scope";

export interface ScopedTool<I, O> extends Omit<Tool<WorkspaceAuth, I, O>, "meta"> {
  readonly scope: Scope;
}

export function scopedTool<I, O>(tool: ScopedTool<I, O>): Tool<WorkspaceAuth, I, O> {
  const { scope, ...rest } = tool;
  return {
    ...rest,
    description: `${tool.description} Requires scope ${scope}.`,
    meta: { [SCOPE_META_KEY]: scope },
  };
}

/** The scope a workspace tool declared. */
export function scopeOf(tool: AnyTool<WorkspaceAuth>): string {
  return String(tool.meta?.[SCOPE_META_KEY]);
}

/**
 * Gated writes only record a request for a human; the change happens on approval, so the
 * call itself destroys nothing, and each call makes a new request.
 */
export const GATED: ToolAnnotations = Object.freeze({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
});

/** What every gated tool returns: the pending approval and where the human decides. */
export const PendingApprovalSchema = v.object({
  gateId: v.string(),
  status: v.literal("pending"),
  approvalUrl: v.string(),
  summary: v.pipe(v.string(), v.description("Exactly what approving would do.")),
});
export type PendingApproval = v.InferOutput<typeof PendingApprovalSchema>;

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
  await services.audit.append({
    businessId: auth.businessId,
    accountId: auth.accountId,
    actor: "agent",
    clientId: auth.clientId,
    action: tool,
    summary,
    gateId: null,
  });
}

/** Records a pending approval for `action`; a request that cannot apply is an isError result. */
export async function requestApproval(
  services: WorkspaceServices,
  auth: WorkspaceAuth,
  tool: { readonly name: string; readonly scope: Scope },
  action: GateAction,
): Promise<PendingApproval> {
  const grant = await getGrant(services.workspace.store, auth.grantId);
  const result = await services.gates.request({
    businessId: auth.businessId,
    accountId: auth.accountId,
    clientId: auth.clientId,
    clientName: grant?.clientName ?? auth.clientId,
    tool: tool.name,
    scope: tool.scope,
    action,
  });
  if (!result.ok) throw new ToolError(result.reason);
  return pendingApproval(services.gates.view(result.gate));
}
