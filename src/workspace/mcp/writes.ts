/**
 * Direct writes: changes the scope itself authorizes, applied at once and audited, one function
 * per tool, in listing order (with the notification settings' and the private conversations'
 * tools: notification_tools.ts, conversation_tools.ts). Anything that spends money or changes
 * access is a gated tool instead (gated.ts).
 */
import * as v from "valibot";
import { BusinessNameSchema } from "../../accounts/schemas.ts";
import { ADDS, OVERWRITES, READ, ToolError } from "../../mcp/tool.ts";
import {
  type Automation,
  AutomationSchema,
  PackSchema,
  SettingValueSchema,
  TriggerSchema,
} from "../domain/records.ts";
import { readableBy } from "../domain/gate_record.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { conversationTools } from "./conversation_tools.ts";
import { notificationTools } from "./notification_tools.ts";
import { auditCall, commitCall, GateViewSchema, IdInput, scopedTool } from "./scoped_tool.ts";

export function writeTools(services: WorkspaceServices) {
  return [
    _renameBusiness(services),
    _disableTrigger(services),
    _configurePack(services),
    ...notificationTools(services),
    _revokeAutomationAuthority(services),
    _simulateWorkflow(services),
    ...conversationTools(services),
    _redeliverDecision(services),
  ];
}

function _renameBusiness(services: WorkspaceServices) {
  const { accounts } = services;
  return scopedTool({
    name: "rename_business",
    title: "Rename the business",
    description: "Changes only the business display name.",
    scope: "business.name",
    input: v.strictObject({
      name: v.pipe(BusinessNameSchema, v.description("The new display name.")),
    }),
    output: v.object({ businessId: v.string(), name: v.string(), previousName: v.string() }),
    annotations: OVERWRITES,
    handler: (args, { auth }) =>
      commitCall(services, auth, "rename_business", async () => {
        const plan = await accounts.planRename(auth.businessId, args.name);
        if (!plan) throw new ToolError("The business no longer exists");
        const { before, renamed } = plan;
        return {
          checks: [plan.check],
          mutations: [plan.mutation],
          summary: `Renamed the business from "${before.name}" to "${renamed.name}"`,
          event: {
            type: "business.renamed",
            data: { name: renamed.name, previousName: before.name },
          },
          result: { businessId: renamed.id, name: renamed.name, previousName: before.name },
        };
      }),
  });
}

function _disableTrigger(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "disable_trigger",
    title: "Disable a trigger",
    description:
      "Disables an event trigger so it no longer starts its workflow. Creating or re-enabling one needs a human (request_trigger_creation).",
    scope: "triggers.manage",
    input: v.strictObject({ triggerId: IdInput("The trigger to disable.") }),
    output: v.object({ trigger: TriggerSchema }),
    annotations: OVERWRITES,
    handler: (args, { auth }) =>
      commitCall(services, auth, "disable_trigger", async () => {
        const entry = await workspace.triggers.get(auth.businessId, args.triggerId);
        if (!entry) throw new ToolError(`No trigger ${args.triggerId} in this business`);
        const trigger = { ...entry.value, enabled: false, updatedAt: services.now() };
        return {
          checks: [{ key: entry.key, version: entry.version }],
          mutations: [{ type: "set", key: entry.key, value: trigger }],
          summary: `Disabled the trigger "${trigger.name}"`,
          event: {
            type: "trigger.disabled",
            data: { triggerId: trigger.id, name: trigger.name, workflowId: trigger.workflowId },
          },
          result: { trigger },
        };
      }),
  });
}

function _configurePack(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "configure_pack",
    title: "Configure a vertical pack",
    description:
      "Enables, disables, upgrades to the latest version, or changes settings of a vertical pack.",
    scope: "packs.manage",
    input: v.strictObject({
      packId: IdInput("The pack to configure."),
      enabled: v.optional(v.boolean()),
      upgrade: v.optional(v.pipe(v.boolean(), v.description("Move to the latest version."))),
      settings: v.optional(
        v.pipe(
          v.record(v.pipe(v.string(), v.maxLength(64)), SettingValueSchema),
          v.check((s) => Object.keys(s).length <= 50, "at most 50 settings"),
          v.description("Settings to set; others stay as they are."),
        ),
      ),
    }),
    output: v.object({ pack: PackSchema }),
    annotations: OVERWRITES,
    handler: (args, { auth }) =>
      commitCall(services, auth, "configure_pack", async () => {
        const entry = await workspace.packs.get(auth.businessId, args.packId);
        if (!entry) throw new ToolError(`No pack ${args.packId} in this business`);
        const pack = {
          ...entry.value,
          enabled: args.enabled ?? entry.value.enabled,
          version: args.upgrade ? entry.value.latestVersion : entry.value.version,
          settings: { ...entry.value.settings, ...args.settings },
          updatedAt: services.now(),
        };
        const changes = [
          args.enabled !== undefined && (args.enabled ? "enabled" : "disabled"),
          args.upgrade && `upgraded to ${pack.version}`,
          args.settings && `set ${Object.keys(args.settings).join(", ")}`,
        ].filter((c): c is string => typeof c === "string");
        return {
          checks: [{ key: entry.key, version: entry.version }],
          mutations: [{ type: "set", key: entry.key, value: pack }],
          summary: `Pack "${pack.name}": ${changes.join("; ") || "no change"}`,
          event: {
            type: "pack.configured",
            data: {
              packId: pack.id,
              name: pack.name,
              enabled: pack.enabled,
              version: pack.version,
              settings: pack.settings,
            },
          },
          result: { pack },
        };
      }),
  });
}

function _revokeAutomationAuthority(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "revoke_automation_authority",
    title: "Revoke automatic-action authority",
    description:
      "Stops all automatic actions at once. Activity controls are left as they are: a disabled activity stays disabled.",
    scope: "automation.revoke",
    input: v.strictObject({}),
    output: AutomationSchema,
    annotations: OVERWRITES,
    handler: (_args, { auth }) =>
      commitCall(services, auth, "revoke_automation_authority", async () => {
        const key = workspace.automation.key(auth.businessId);
        const current = await workspace.automation.get(auth.businessId);
        const automation: Automation = {
          activities: current?.value.activities ?? {},
          automaticActions: { enabled: false, maxPerDay: 0, maxAmountCents: 0 },
          updatedAt: services.now(),
        };
        return {
          checks: [{ key, version: current?.version ?? null }],
          mutations: [{ type: "set", key, value: automation }],
          summary: "Revoked automatic-action authority",
          event: {
            type: "automation.revoked",
            data: { automaticActions: automation.automaticActions },
          },
          result: automation,
        };
      }),
  });
}

function _simulateWorkflow(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "simulate_workflow",
    title: "Simulate a workflow",
    description:
      "A dry run: what the workflow would read and do, and what a real run would cost. Nothing is started, written or billed.",
    scope: "workflows.simulate",
    input: v.strictObject({ workflowId: IdInput("The workflow to simulate.") }),
    output: v.object({
      workflowId: v.string(),
      wouldStart: v.boolean(),
      reasons: v.array(v.string()),
      reads: v.array(v.string()),
      estimatedCostCents: v.number(),
      sideEffects: v.literal("none"),
    }),
    annotations: READ,
    // Writes no record, but the business's systems hear of it (workflow_run.simulated).
    handler: (args, { auth }) =>
      commitCall(services, auth, "simulate_workflow", async () => {
        const entry = await workspace.workflows.get(auth.businessId, args.workflowId);
        if (!entry) throw new ToolError(`No workflow ${args.workflowId} in this business`);
        const workflow = entry.value;
        const connections = await workspace.connections.list(auth.businessId);
        const connected = connections.filter((c) => c.status === "connected");
        const reasons = [
          workflow.status === "paused" && "the workflow is paused",
          connected.length === 0 && "no service is connected",
        ].filter((r): r is string => typeof r === "string");
        const result = {
          workflowId: workflow.id,
          wouldStart: reasons.length === 0,
          reasons,
          reads: connected.map((c) => `${c.service} (${c.label})`),
          estimatedCostCents: workflow.kind === "paid" ? workflow.costPerRunCents : 0,
          sideEffects: "none" as const,
        };
        const { sideEffects: _, ...simulation } = result;
        return {
          checks: [],
          mutations: [],
          summary: null,
          event: { type: "workflow_run.simulated", data: { runId: null, ...simulation } },
          result,
        };
      }),
  });
}

function _redeliverDecision(services: WorkspaceServices) {
  const { gates } = services;
  return scopedTool({
    name: "redeliver_decision",
    title: "Redeliver a decision",
    description:
      "Retries delivery of an existing human decision on an approval to its requester. Changes nothing else; a pending approval has nothing to deliver.",
    scope: "gates.redeliver",
    input: v.strictObject({ gateId: IdInput("The approval whose decision to deliver again.") }),
    output: GateViewSchema,
    annotations: ADDS,
    async handler(args, { auth }) {
      const gate = await gates.get(args.gateId);
      // Another member's approval is not there for this one (gate_record.ts readableBy).
      if (!gate || gate.businessId !== auth.businessId || !readableBy(gate, auth)) {
        throw new ToolError(`No approval ${args.gateId} in this business`);
      }
      const redelivered = await gates.redeliver(gate);
      if (!redelivered) {
        throw new ToolError(
          gate.status === "withdrawn"
            ? `Approval ${args.gateId} was withdrawn by the agent that asked: no decision to deliver`
            : `Approval ${args.gateId} is still pending: no decision to deliver`,
        );
      }
      await auditCall(
        services,
        auth,
        "redeliver_decision",
        `Redelivered the decision on ${gate.id}`,
      );
      return await gates.fullView(redelivered);
    },
  });
}
