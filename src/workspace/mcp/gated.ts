/**
 * Gated writes: money, access, connections, automatic-action authority, skill installation,
 * reconciliation of unknown external writes and billing are human decisions (spec §1). Each
 * tool records a pending approval that says exactly what would happen and returns where an
 * owner decides; nothing changes until an owner approves.
 */
import * as v from "valibot";
import { oneLine } from "../../accounts/schemas.ts";
import { CONNECTION_KINDS, PLANS } from "../domain/records.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { TRIGGER_EVENTS } from "./reads.ts";
import { gatedTool, IdInput } from "./scoped_tool.ts";

/** One line: each of these reaches the approval mail's body (gate_actions.ts, the outcome). */
const Text = (max: number, what: string) =>
  v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max), oneLine(), v.description(what));
const Email = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email(), v.maxLength(254));

export function gatedTools(services: WorkspaceServices) {
  return [
    _startWorkflow(services),
    _requestTriggerCreation(services),
    _requestConnectionChange(services),
    _requestHelpdeskSetup(services),
    _requestMailboxSetup(services),
    _requestAccessChange(services),
    _requestAutomationAuthority(services),
    _draftSkill(services),
    _requestEffectReconciliation(services),
    _requestBillingChange(services),
  ];
}

function _startWorkflow(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "start_workflow",
    title: "Start a workflow (needs approval)",
    description:
      "Asks an owner to approve one run of a paid or live workflow. Nothing starts until they approve at approvalUrl. Never use this to test connectivity: use get_agent_connection_setup.",
    scope: "workflows.run",
    input: v.strictObject({ workflowId: IdInput("The workflow to run once.") }),
    action: (args) => ({
      type: "start_workflow",
      workflowId: args.workflowId,
    }),
  });
}

function _requestTriggerCreation(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_trigger_creation",
    title: "Prepare a new trigger (needs approval)",
    description:
      "Prepares an event trigger that starts a workflow, for a human to confirm. Nothing is created until an owner approves.",
    scope: "triggers.manage",
    input: v.strictObject({
      name: Text(100, "A name for the trigger."),
      event: v.picklist(TRIGGER_EVENTS),
      workflowId: IdInput("The workflow the trigger starts."),
    }),
    action: (args) => ({ type: "create_trigger", ...args }),
  });
}

function _requestConnectionChange(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_connection_change",
    title: "Connect, reconnect or disconnect a service (needs approval)",
    description:
      "Prepares connecting a new business service, or reconnecting or disconnecting an existing one (connectionId), for an owner to approve.",
    scope: "connections.manage",
    input: v.strictObject({
      change: v.picklist(["connect", "reconnect", "disconnect"]),
      kind: v.picklist(CONNECTION_KINDS),
      connectionId: v.optional(IdInput("The existing connection, for reconnect and disconnect.")),
      service: Text(100, "The service, e.g. Storefront."),
      label: Text(200, "What it connects as, e.g. a shop domain."),
    }),
    action: (args) => ({
      type: "change_connection",
      ...args,
      connectionId: args.connectionId ?? null,
    }),
  });
}

function _requestHelpdeskSetup(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_helpdesk_setup",
    title: "Prepare helpdesk setup or detach (needs approval)",
    description:
      "Prepares connecting a helpdesk, or detaching the workspace's workload from one (connectionId), for the business owner's review.",
    scope: "connections.helpdesk.request",
    input: v.strictObject({
      change: v.picklist(["setup", "detach"]),
      connectionId: v.optional(IdInput("The helpdesk connection to detach.")),
      service: Text(100, "The helpdesk product."),
      label: Text(200, "The helpdesk account, e.g. its domain."),
    }),
    action: (args) => ({
      type: "change_connection",
      change: args.change === "setup" ? "connect" : "disconnect",
      kind: "helpdesk",
      connectionId: args.connectionId ?? null,
      service: args.service,
      label: args.label,
    }),
  });
}

function _requestMailboxSetup(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_mailbox_setup",
    title: "Prepare inbox setup, reconnect or detach (needs approval)",
    description:
      "Prepares connecting an inbox, or reconnecting or detaching one (connectionId), for human review and consent.",
    scope: "connections.mailbox.request",
    input: v.strictObject({
      change: v.picklist(["setup", "reconnect", "detach"]),
      connectionId: v.optional(IdInput("The inbox connection to reconnect or detach.")),
      address: v.pipe(Email, v.description("The inbox address.")),
    }),
    action: (args) => ({
      type: "change_connection",
      change: args.change === "setup"
        ? "connect"
        : args.change === "reconnect"
        ? "reconnect"
        : "disconnect",
      kind: "mailbox",
      connectionId: args.connectionId ?? null,
      service: "Mail",
      label: args.address,
    }),
  });
}

function _requestAccessChange(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_access_change",
    title: "Prepare an access change (needs approval)",
    description:
      "Prepares inviting someone, changing a member's role, or removing a member, for an owner to confirm.",
    scope: "members.request",
    input: v.strictObject({
      change: v.picklist(["invite", "change_role", "remove"]),
      email: Email,
      role: v.optional(v.picklist(["owner", "member"]), "member"),
    }),
    action: (args) => ({ type: "change_access", ...args }),
  });
}

function _requestAutomationAuthority(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_automation_authority",
    title: "Prepare automation authority (needs approval)",
    description:
      "Prepares activity controls and bounded automatic-action authority (a daily count and a per-action amount) for an owner to review.",
    scope: "automation.request",
    input: v.strictObject({
      activities: v.pipe(
        v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(64), oneLine()), v.boolean()),
        v.check((a) => Object.keys(a).length <= 50, "at most 50 activities"),
        v.description("Activity name -> enabled."),
      ),
      automaticActions: v.object({
        enabled: v.boolean(),
        maxPerDay: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000)),
        maxAmountCents: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000_000)),
      }),
    }),
    action: (args) => ({ type: "grant_automation", ...args }),
  });
}

function _draftSkill(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "draft_skill",
    title: "Draft a skill for installation (needs approval)",
    description: "Prepares an agent skill draft; a human reviews it and installs it by approving.",
    scope: "skills.draft",
    input: v.strictObject({
      name: Text(100, "The skill's name."),
      description: Text(500, "What the skill does."),
      // Lines of their own, as the agent will follow them; shown on the approval page, not mailed.
      instructions: v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1),
        v.maxLength(8_000),
        v.description("The skill's instructions, as the agent will follow them."),
      ),
    }),
    action: (args) => ({
      type: "install_skill",
      ...args,
    }),
  });
}

function _requestEffectReconciliation(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_effect_reconciliation",
    title: "Prepare reconciling an unknown write (needs approval)",
    description:
      "For an external write whose outcome is unknown (list_external_writes), prepares recording it as applied or not applied, or retrying it, for a human to confirm.",
    scope: "effects.request",
    input: v.strictObject({
      effectId: IdInput("The external write."),
      resolution: v.picklist(["applied", "not_applied", "retry"]),
    }),
    action: (args) => ({ type: "reconcile_effect", ...args }),
  });
}

function _requestBillingChange(services: WorkspaceServices) {
  return gatedTool(services, {
    name: "request_billing_change",
    title: "Change the subscription or payment details (needs approval)",
    description:
      "Prepares a change of plan, seats or payment method for an owner to approve. Nothing is charged or changed before that.",
    scope: "billing.manage",
    input: v.strictObject({
      plan: v.optional(v.picklist(PLANS)),
      seats: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10_000))),
      paymentMethod: v.optional(Text(100, "A description of the new payment method.")),
    }),
    action: (args) => ({
      type: "change_billing",
      plan: args.plan ?? null,
      seats: args.seats ?? null,
      paymentMethod: args.paymentMethod ?? null,
    }),
  });
}
