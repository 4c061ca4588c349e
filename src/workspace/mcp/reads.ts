/**
 * The read tools: business data under `app.access`, and the reads that have their own
 * scope (`members.read`, `triggers.read`, `billing.read`). None changes anything.
 */
import * as v from "valibot";
import { READ } from "../../mcp/tool.ts";
import { ToolError } from "../../mcp/tool.ts";
import {
  ConnectionSchema,
  EffectSchema,
  InvitationSchema,
  InvoiceSchema,
  PackSchema,
  RunSchema,
  SkillSchema,
  SubscriptionSchema,
  TriggerSchema,
  WorkflowSchema,
} from "../domain/records.ts";
import { readableBy } from "../domain/gate_record.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { NO_SUBSCRIPTION } from "../domain/workspace.ts";
import { GateViewSchema, scopedTool } from "./scoped_tool.ts";

const NoInput = v.strictObject({});

/** Events a trigger can listen to (the eligible configurations of `triggers.read`). */
export const TRIGGER_EVENTS = [
  "order.created",
  "order.fulfilled",
  "refund.requested",
  "inventory.low",
  "ticket.created",
  "message.received",
] as const;

export function readTools(services: WorkspaceServices) {
  return [
    _getBusiness(services),
    _listWorkflows(services),
    _listWorkflowRuns(services),
    _listConnections(services),
    _listPacks(services),
    _listSkills(services),
    _listExternalWrites(services),
    _getApproval(services),
    _listMembers(services),
    _listTriggers(services),
    _getBillingSummary(services),
    _listInvoices(services),
  ];
}

function _getBusiness(services: WorkspaceServices) {
  const { accounts } = services;
  return scopedTool({
    name: "get_business",
    title: "Business overview",
    description:
      "The business this token is for: its name, your role in it, and the scopes this token carries.",
    scope: "app.access",
    input: NoInput,
    output: v.object({
      businessId: v.string(),
      name: v.string(),
      role: v.picklist(["owner", "member"]),
      grantedScopes: v.array(v.string()),
    }),
    annotations: READ,
    async handler(_args, { auth }) {
      const business = await accounts.getBusiness(auth.businessId);
      return {
        businessId: auth.businessId,
        name: business?.name ?? "",
        role: auth.role,
        grantedScopes: [...auth.scopes],
      };
    },
  });
}

function _listWorkflows(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_workflows",
    title: "List workflows",
    description:
      "The business's workflows: what each does, whether runs are live, paid or internal, and the cost per run.",
    scope: "app.access",
    input: NoInput,
    output: v.object({ workflows: v.array(WorkflowSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { workflows: await workspace.workflows.list(auth.businessId) };
    },
  });
}

function _listWorkflowRuns(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_workflow_runs",
    title: "List workflow runs",
    description: "Runs of the business's workflows, newest first; optionally of one workflow.",
    scope: "app.access",
    input: v.strictObject({
      workflowId: v.optional(
        v.pipe(v.string(), v.maxLength(100), v.description("Only this workflow's runs.")),
      ),
    }),
    output: v.object({ runs: v.array(RunSchema) }),
    annotations: READ,
    async handler(args, { auth }) {
      const runs = await workspace.runs.list(auth.businessId);
      return {
        runs: runs
          .filter((run) => args.workflowId === undefined || run.workflowId === args.workflowId)
          .sort((a, b) => b.startedAt - a.startedAt),
      };
    },
  });
}

function _listConnections(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_connections",
    title: "List connections",
    description: "The business services connected to the workspace and their status.",
    scope: "app.access",
    input: NoInput,
    output: v.object({ connections: v.array(ConnectionSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { connections: await workspace.connections.list(auth.businessId) };
    },
  });
}

function _listPacks(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_packs",
    title: "List vertical packs",
    description: "The vertical packs available to the business, enabled or not, with settings.",
    scope: "app.access",
    input: NoInput,
    output: v.object({ packs: v.array(PackSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { packs: await workspace.packs.list(auth.businessId) };
    },
  });
}

function _listSkills(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_skills",
    title: "List installed skills",
    description: "Agent skills a human installed in the business.",
    scope: "app.access",
    input: NoInput,
    output: v.object({ skills: v.array(SkillSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { skills: await workspace.skills.list(auth.businessId) };
    },
  });
}

function _listExternalWrites(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_external_writes",
    title: "List external writes",
    description:
      "Writes to connected services and whether their outcome is known; unknown ones can be reconciled with request_effect_reconciliation.",
    scope: "app.access",
    input: NoInput,
    output: v.object({ writes: v.array(EffectSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { writes: await workspace.effects.list(auth.businessId) };
    },
  });
}

function _getApproval(services: WorkspaceServices) {
  const { gates } = services;
  return scopedTool({
    name: "get_approval",
    title: "Read an approval",
    description:
      "The status of a pending approval (gate) of this business: pending, approved or declined, and what happened.",
    scope: "app.access",
    input: v.strictObject({
      gateId: v.pipe(
        v.string(),
        v.minLength(1),
        v.maxLength(100),
        v.description("The gateId a gated tool returned."),
      ),
    }),
    output: GateViewSchema,
    annotations: READ,
    async handler(args, { auth }) {
      const gate = await gates.get(args.gateId);
      // Another member's approval is not there for this one (gate_record.ts readableBy).
      if (!gate || gate.businessId !== auth.businessId || !readableBy(gate, auth)) {
        throw new ToolError(`No approval ${args.gateId} in this business`);
      }
      return await gates.fullView(gate);
    },
  });
}

function _listMembers(services: WorkspaceServices) {
  const { workspace, accounts } = services;
  return scopedTool({
    name: "list_members",
    title: "List members and invitations",
    description: "The business's members with their roles, and invitations with delivery status.",
    scope: "members.read",
    input: NoInput,
    output: v.object({
      members: v.array(v.object({
        accountId: v.string(),
        email: v.string(),
        name: v.string(),
        role: v.picklist(["owner", "member"]),
      })),
      invitations: v.array(InvitationSchema),
    }),
    annotations: READ,
    async handler(_args, { auth }) {
      const members = await accounts.listMembers(auth.businessId);
      return {
        members: members.map(({ account, role }) => ({
          accountId: account.id,
          email: account.email,
          name: account.name,
          role,
        })),
        invitations: await workspace.invitations.list(auth.businessId),
      };
    },
  });
}

function _listTriggers(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_triggers",
    title: "List event triggers",
    description: "The business's event triggers and the events a new trigger can listen to.",
    scope: "triggers.read",
    input: NoInput,
    output: v.object({ triggers: v.array(TriggerSchema), eligibleEvents: v.array(v.string()) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return {
        triggers: await workspace.triggers.list(auth.businessId),
        eligibleEvents: [...TRIGGER_EVENTS],
      };
    },
  });
}

function _getBillingSummary(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "get_billing_summary",
    title: "Billing summary",
    description: "The business's subscription, seats, payment method on file and usage.",
    scope: "billing.read",
    input: NoInput,
    output: SubscriptionSchema,
    annotations: READ,
    async handler(_args, { auth }) {
      return (await workspace.subscription.get(auth.businessId))?.value ?? NO_SUBSCRIPTION;
    },
  });
}

function _listInvoices(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "list_invoices",
    title: "List invoices",
    description: "The business's invoices, newest first.",
    scope: "billing.read",
    input: NoInput,
    output: v.object({ invoices: v.array(InvoiceSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      const invoices = await workspace.invoices.list(auth.businessId);
      return { invoices: invoices.sort((a, b) => b.issuedAt - a.issuedAt) };
    },
  });
}
