/**
 * Direct writes: changes the scope itself authorizes, applied at once and audited.
 * Anything that spends money or changes access is a gated tool instead (gated.ts).
 */
import * as v from "valibot";
import { BusinessNameSchema } from "../../accounts/schemas.ts";
import { READ } from "../../mcp/tool.ts";
import { ToolError } from "../../mcp/tool.ts";
import { composeMail } from "../../mail/compose.ts";
import { StoreUnavailableError } from "../../store/store.ts";
import {
  type Automation,
  AutomationSchema,
  ConversationSchema,
  NotificationSettingsSchema,
  PackSchema,
  SettingValueSchema,
  TriggerSchema,
} from "../domain/records.ts";
import { readableBy } from "../domain/gate_record.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { DEFAULT_NOTIFICATION_SETTINGS } from "../domain/workspace.ts";
import { auditCall, commitCall, GateViewSchema, scopedTool } from "./scoped_tool.ts";

const Id = (what: string) =>
  v.pipe(v.string(), v.minLength(1), v.maxLength(100), v.description(what));

/** Overwrites existing state: clients should confirm with their human first. */
const OVERWRITES = Object.freeze({
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
});
/** Adds something new and leaves what exists alone. */
const ADDS = Object.freeze({
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
});

export function writeTools(services: WorkspaceServices) {
  const { workspace, accounts, conversations, gates, mailer } = services;
  return [
    scopedTool({
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
    }),
    scopedTool({
      name: "disable_trigger",
      title: "Disable a trigger",
      description:
        "Disables an event trigger so it no longer starts its workflow. Creating or re-enabling one needs a human (request_trigger_creation).",
      scope: "triggers.manage",
      input: v.strictObject({ triggerId: Id("The trigger to disable.") }),
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
    }),
    scopedTool({
      name: "configure_pack",
      title: "Configure a vertical pack",
      description:
        "Enables, disables, upgrades to the latest version, or changes settings of a vertical pack.",
      scope: "packs.manage",
      input: v.strictObject({
        packId: Id("The pack to configure."),
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
    }),
    scopedTool({
      name: "get_notification_settings",
      title: "Read my notification settings",
      description: "Your own approval notification settings in this business.",
      scope: "notifications.manage",
      input: v.strictObject({}),
      output: NotificationSettingsSchema,
      annotations: READ,
      async handler(_args, { auth }) {
        return (await workspace.notificationSettings.get(auth.businessId, auth.accountId))?.value ??
          DEFAULT_NOTIFICATION_SETTINGS;
      },
    }),
    scopedTool({
      name: "update_notification_settings",
      title: "Change my notification settings",
      description:
        "Changes your own approval notification settings: whether decisions are e-mailed to you, and the chat-workspace account linked to you.",
      scope: "notifications.manage",
      input: v.strictObject({
        approvalEmails: v.optional(v.boolean()),
        chatAccount: v.optional(
          v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
        ),
      }),
      output: NotificationSettingsSchema,
      annotations: OVERWRITES,
      handler: (args, { auth }) =>
        commitCall(services, auth, "update_notification_settings", async () => {
          const key = workspace.notificationSettings.key(auth.businessId, auth.accountId);
          const stored = await workspace.notificationSettings.get(auth.businessId, auth.accountId);
          const current = stored?.value ?? DEFAULT_NOTIFICATION_SETTINGS;
          const settings = {
            approvalEmails: args.approvalEmails ?? current.approvalEmails,
            chatAccount: args.chatAccount === undefined ? current.chatAccount : args.chatAccount,
          };
          return {
            checks: [{ key, version: stored?.version ?? null }],
            mutations: [{ type: "set", key, value: settings }],
            summary: `Approval e-mails ${settings.approvalEmails ? "on" : "off"}; chat account ${
              settings.chatAccount ?? "none"
            }`,
            event: null,
            result: settings,
          };
        }),
    }),
    scopedTool({
      name: "send_test_notification",
      title: "Send myself a test notification",
      description: "E-mails you a test approval notification, to check your settings.",
      scope: "notifications.manage",
      input: v.strictObject({}),
      output: v.object({ sentTo: v.string() }),
      annotations: { ...ADDS, openWorldHint: true },
      async handler(_args, { auth }) {
        const account = await accounts.getAccount(auth.accountId);
        if (!account) throw new ToolError("Your account no longer exists");
        const link = gates.approvalsUrl;
        const business = await accounts.getBusiness(auth.businessId);
        const businessName = business?.name ?? "your business";
        try {
          await mailer.send(composeMail({
            to: account.email,
            subject: `Test notification from ${businessName} on Vestibule`,
            heading: `Your approval notifications for "${businessName}" reach you`,
            paragraphs: [
              `This is a test an agent sent at your request: nothing needs approving. When an ` +
              `agent asks for an owner's approval in "${businessName}", or an owner decides what ` +
              `your agent asked for, you get a mail like this one.`,
              `Every approval of your businesses is also listed on your approvals page.`,
            ],
            action: { label: "Open your approvals", url: link },
            reason: `You get this because an agent you connected to "${businessName}" asked ` +
              `for a test notification (send_test_notification).`,
            origin: new URL(link).origin,
          }));
        } catch (error) {
          // The store's outage is the endpoint's to answer (503), as for every other tool.
          if (error instanceof StoreUnavailableError) throw error;
          throw new ToolError("The test notification could not be sent; try again later");
        }
        await auditCall(
          services,
          auth,
          "send_test_notification",
          `Sent a test notification to ${account.email}`,
        );
        return { sentTo: account.email };
      },
    }),
    scopedTool({
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
    }),
    scopedTool({
      name: "simulate_workflow",
      title: "Simulate a workflow",
      description:
        "A dry run: what the workflow would read and do, and what a real run would cost. Nothing is started, written or billed.",
      scope: "workflows.simulate",
      input: v.strictObject({ workflowId: Id("The workflow to simulate.") }),
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
    }),
    scopedTool({
      name: "create_conversation",
      title: "Start a private conversation",
      description: "Creates one of your private agent conversations in this business.",
      scope: "agent.sessions",
      input: v.strictObject({
        title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
      }),
      output: ConversationSchema,
      annotations: ADDS,
      async handler(args, { auth }) {
        const conversation = await conversations.create(
          auth.businessId,
          auth.accountId,
          args.title,
        );
        await auditCall(services, auth, "create_conversation", "Started a private conversation");
        return conversation;
      },
    }),
    scopedTool({
      name: "list_conversations",
      title: "List my private conversations",
      description: "Your private agent conversations in this business; nobody else's.",
      scope: "agent.sessions",
      input: v.strictObject({}),
      output: v.object({ conversations: v.array(ConversationSchema) }),
      annotations: READ,
      async handler(_args, { auth }) {
        return { conversations: await conversations.list(auth.businessId, auth.accountId) };
      },
    }),
    scopedTool({
      name: "add_conversation_message",
      title: "Add to a private conversation",
      description: "Appends a message to one of your private conversations.",
      scope: "agent.sessions",
      input: v.strictObject({
        conversationId: Id("The conversation."),
        role: v.picklist(["user", "agent"]),
        text: v.pipe(v.string(), v.minLength(1), v.maxLength(8_000)),
      }),
      output: ConversationSchema,
      annotations: ADDS,
      async handler(args, { auth }) {
        const updated = await conversations.append(
          auth.businessId,
          auth.accountId,
          args.conversationId,
          {
            role: args.role,
            text: args.text,
          },
        );
        if (updated === null) {
          throw new ToolError(`No conversation ${args.conversationId} of yours`);
        }
        if (updated === "full") throw new ToolError("The conversation is full; start a new one");
        await auditCall(
          services,
          auth,
          "add_conversation_message",
          "Added to a private conversation",
        );
        return updated;
      },
    }),
    scopedTool({
      name: "redeliver_decision",
      title: "Redeliver a decision",
      description:
        "Retries delivery of an existing human decision on an approval to its requester. Changes nothing else; a pending approval has nothing to deliver.",
      scope: "gates.redeliver",
      input: v.strictObject({ gateId: Id("The approval whose decision to deliver again.") }),
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
    }),
  ];
}
