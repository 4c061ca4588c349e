/**
 * How an approved request is applied: `planAction` reads the current records and returns the
 * writes, or why there are none, with the versions of everything it read, so that the gate's
 * decision, its effect and its audit entry commit together, exactly once, and only while what the
 * decision read still holds. One planner per action.
 */
import type { Mutation } from "../../store/store.ts";
import {
  type Automation,
  type Connection,
  money,
  type Run,
  type Skill,
  type Subscription,
  type Trigger,
} from "./records.ts";
import { NO_SUBSCRIPTION } from "./workspace.ts";
import { recordInvitation, roleWithArticle } from "./invitations.ts";
import { planCallUpstream } from "./upstream_call_plan.ts";
import { planApproveToolDefinition, planApproveToolDefinitions } from "./tool_definition_plan.ts";

import {
  type ActionOf,
  type Approval,
  type GateAction,
  type Plan,
  PLAN_PRICES,
  type PlanDeps,
  type PlanEvent,
  unchanged,
} from "./gate_actions.ts";

type Planner<T extends GateAction["type"]> = (
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<T>,
  approval: Approval,
) => Promise<Plan>;

function _connectionEvent(change: string, connection: Connection): PlanEvent {
  return {
    type: "connection.change_approved",
    data: {
      change,
      connectionId: connection.id,
      kind: connection.kind,
      service: connection.service,
      label: connection.label,
      status: connection.status,
    },
  };
}

/**
 * Exactly what approving would do, in the words the owner reads on the approval page.
 * Returns a reason instead when the request cannot be applied as it stands.
 */
export async function describeAction(
  deps: PlanDeps,
  businessId: string,
  action: GateAction,
): Promise<{ ok: true; summary: string } | { ok: false; reason: string }> {
  const plan = await planAction(deps, businessId, action, { accountId: "", gateId: "" });
  if (!plan.ok) return { ok: false, reason: plan.reason };
  return { ok: true, summary: plan.outcome };
}

export function planAction(
  deps: PlanDeps,
  businessId: string,
  action: GateAction,
  approval: Approval,
): Promise<Plan> {
  const plan = PLANNERS[action.type] as Planner<typeof action.type>;
  return plan(deps, businessId, action, approval);
}

/** Each action's planner; the compiler holds the table to every action type. */
const PLANNERS: { readonly [T in GateAction["type"]]: Planner<T> } = {
  start_workflow: _planStartWorkflow,
  create_trigger: _planCreateTrigger,
  change_connection: _planChangeConnection,
  change_access: _planChangeAccess,
  grant_automation: _planGrantAutomation,
  install_skill: _planInstallSkill,
  reconcile_effect: _planReconcileEffect,
  change_billing: _planChangeBilling,
  call_upstream: planCallUpstream,
  approve_tool_definition: planApproveToolDefinition,
  approve_tool_definitions: planApproveToolDefinitions,
};

async function _planStartWorkflow(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"start_workflow">,
  approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  const workflow = await workspace.workflows.get(businessId, action.workflowId);
  const checks = [unchanged(workspace.workflows.key(businessId, action.workflowId), workflow)];
  if (!workflow) return { ok: false, reason: `No workflow ${action.workflowId}`, checks };
  if (workflow.value.status !== "active") {
    return { ok: false, reason: `Workflow ${workflow.value.name} is paused`, checks };
  }
  const run: Run = {
    id: crypto.randomUUID(),
    workflowId: action.workflowId,
    status: "queued",
    startedAt: now(),
    finishedAt: null,
    approvedBy: approval.accountId,
    gateId: approval.gateId,
    result: null,
    costCents: null,
    updatedAt: now(),
  };
  const mutations: Mutation[] = [
    { type: "set", key: workspace.runs.key(businessId, run.id), value: run },
  ];
  const cost = workflow.value.costPerRunCents;
  if (workflow.value.kind === "paid") {
    const subscription = await workspace.subscription.get(businessId);
    const current = subscription?.value ?? NO_SUBSCRIPTION;
    checks.push(unchanged(workspace.subscription.key(businessId), subscription));
    mutations.push({
      type: "set",
      key: workspace.subscription.key(businessId),
      value: {
        ...current,
        usage: { ...current.usage, runs: current.usage.runs + 1 },
        updatedAt: now(),
      } satisfies Subscription,
    });
  }
  return {
    ok: true,
    checks,
    mutations,
    event: {
      type: "workflow_run.requested",
      data: {
        runId: run.id,
        workflowId: workflow.value.id,
        workflowName: workflow.value.name,
        workflowKind: workflow.value.kind,
        costCents: workflow.value.kind === "paid" ? cost : 0,
      },
    },
    outcome: `Start one run of the ${workflow.value.kind} workflow "${workflow.value.name}"` +
      (workflow.value.kind === "paid" ? `, billed ${money(cost)}` : "") +
      (workflow.value.kind === "live" ? ", acting on connected live systems" : ""),
  };
}

async function _planCreateTrigger(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"create_trigger">,
  _approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  const workflow = await workspace.workflows.get(businessId, action.workflowId);
  const checks = [unchanged(workspace.workflows.key(businessId, action.workflowId), workflow)];
  if (!workflow) return { ok: false, reason: `No workflow ${action.workflowId}`, checks };
  const trigger: Trigger = {
    id: crypto.randomUUID(),
    name: action.name,
    event: action.event,
    workflowId: action.workflowId,
    enabled: true,
    updatedAt: now(),
  };
  return {
    ok: true,
    checks,
    mutations: [{
      type: "set",
      key: workspace.triggers.key(businessId, trigger.id),
      value: trigger,
    }],
    event: {
      type: "trigger.creation_approved",
      data: {
        triggerId: trigger.id,
        name: trigger.name,
        event: trigger.event,
        workflowId: trigger.workflowId,
      },
    },
    outcome:
      `Create the enabled trigger "${action.name}" that runs workflow "${workflow.value.name}" on every ${action.event} event`,
  };
}

async function _planChangeConnection(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"change_connection">,
  _approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  if (action.change === "connect") {
    const connection: Connection = {
      id: crypto.randomUUID(),
      kind: action.kind,
      service: action.service,
      label: action.label,
      status: "connected",
      updatedAt: now(),
    };
    return {
      ok: true,
      checks: [],
      mutations: [{
        type: "set",
        key: workspace.connections.key(businessId, connection.id),
        value: connection,
      }],
      event: _connectionEvent(action.change, connection),
      outcome: `Connect the ${action.kind} service ${action.service} as ${action.label}`,
    };
  }
  if (action.connectionId === null) {
    return {
      ok: false,
      reason: `To ${action.change}, name the connection (connectionId)`,
      checks: [],
    };
  }
  const existing = await workspace.connections.get(businessId, action.connectionId);
  const checks = [
    unchanged(workspace.connections.key(businessId, action.connectionId), existing),
  ];
  if (!existing) return { ok: false, reason: `No connection ${action.connectionId}`, checks };
  if (existing.value.kind !== action.kind) {
    return {
      ok: false,
      reason:
        `Connection ${action.connectionId} is a ${existing.value.kind} connection, not ${action.kind}`,
      checks,
    };
  }
  const status = action.change === "disconnect" ? "disconnected" : "connected";
  const changed: Connection = { ...existing.value, status, updatedAt: now() };
  return {
    ok: true,
    checks,
    mutations: [{ type: "set", key: existing.key, value: changed }],
    event: _connectionEvent(action.change, changed),
    outcome: `${
      action.change === "disconnect" ? "Disconnect" : "Reconnect"
    } the ${existing.value.kind} connection ${existing.value.service} (${existing.value.label})`,
  };
}

async function _planChangeAccess(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"change_access">,
  approval: Approval,
): Promise<Plan> {
  const { accounts } = deps;
  const membership = await accounts.planMembershipChange(businessId, action);
  if (!membership.ok) return membership;
  const { checks, mutations } = membership;
  const event = {
    type: "access.changed",
    data: { change: action.change, email: action.email, role: action.role },
  };
  if (action.change === "remove") {
    return {
      ok: true,
      checks,
      mutations,
      event: { ...event, data: { change: action.change, email: action.email, role: null } },
      outcome: `Remove ${action.email} from the business`,
    };
  }
  if (action.change === "change_role") {
    return {
      ok: true,
      checks,
      mutations,
      event,
      outcome: `Change the role of ${action.email} to ${action.role}`,
    };
  }
  const [business, approver] = await Promise.all([
    accounts.getBusiness(businessId),
    accounts.getAccount(approval.accountId),
  ]);
  const businessName = business?.name ?? "a business";
  // The invitation and its mail are committed with the membership and the decision.
  const invitation = recordInvitation(deps, {
    businessId,
    businessName,
    email: action.email,
    role: action.role,
    addedBy: approver
      ? `${approver.email}, an owner of "${businessName}"`
      : `an owner of "${businessName}"`,
  });
  return {
    ok: true,
    checks,
    mutations: [...mutations, ...invitation.mutations],
    event,
    outcome: `Invite ${action.email} as ${roleWithArticle(action.role)}`,
    deliveries: [invitation.delivery],
  };
}

async function _planGrantAutomation(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"grant_automation">,
  _approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  const existing = await workspace.automation.get(businessId);
  const automation: Automation = {
    activities: action.activities,
    automaticActions: action.automaticActions,
    updatedAt: now(),
  };
  const enabled = Object.entries(action.activities).filter(([, on]) => on).map(([n]) => n);
  const limits = action.automaticActions;
  return {
    ok: true,
    checks: [unchanged(workspace.automation.key(businessId), existing)],
    mutations: [{ type: "set", key: workspace.automation.key(businessId), value: automation }],
    event: {
      type: "automation.change_approved",
      data: { activities: action.activities, automaticActions: action.automaticActions },
    },
    outcome: `Set activity controls (enabled: ${enabled.join(", ") || "none"}) and ` +
      (limits.enabled
        ? `allow automatic actions, at most ${limits.maxPerDay} a day and ${
          money(limits.maxAmountCents)
        } each`
        : "allow no automatic actions"),
  };
}

/** Nothing to read: a new skill checks nothing. */
function _planInstallSkill(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"install_skill">,
  approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  const skill: Skill = {
    id: crypto.randomUUID(),
    name: action.name,
    description: action.description,
    instructions: action.instructions,
    installedAt: now(),
    installedBy: approval.accountId,
  };
  return Promise.resolve({
    ok: true,
    checks: [],
    mutations: [{ type: "set", key: workspace.skills.key(businessId, skill.id), value: skill }],
    event: {
      type: "skill.install_approved",
      data: {
        skillId: skill.id,
        name: skill.name,
        description: skill.description,
        instructions: skill.instructions,
      },
    },
    outcome: `Install the skill "${action.name}": ${action.description}`,
  });
}

async function _planReconcileEffect(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"reconcile_effect">,
  _approval: Approval,
): Promise<Plan> {
  const { workspace } = deps;
  const effect = await workspace.effects.get(businessId, action.effectId);
  const checks = [unchanged(workspace.effects.key(businessId, action.effectId), effect)];
  if (!effect) return { ok: false, reason: `No external write ${action.effectId}`, checks };
  if (effect.value.status !== "unknown") {
    return {
      ok: false,
      reason: `External write ${action.effectId} is already reconciled`,
      checks,
    };
  }
  const status = action.resolution === "retry" ? "retried" : action.resolution;
  const words = {
    applied: "Record as applied",
    not_applied: "Record as not applied",
    retry: "Retry",
  }[action.resolution];
  return {
    ok: true,
    checks,
    mutations: [{ type: "set", key: effect.key, value: { ...effect.value, status } }],
    event: {
      type: "effect.reconcile_approved",
      data: {
        effectId: action.effectId,
        resolution: action.resolution,
        description: effect.value.description,
      },
    },
    outcome: `${words} the external write "${effect.value.description}"`,
  };
}

async function _planChangeBilling(
  deps: PlanDeps,
  businessId: string,
  action: ActionOf<"change_billing">,
  _approval: Approval,
): Promise<Plan> {
  const { workspace, now } = deps;
  if (action.plan === null && action.seats === null && action.paymentMethod === null) {
    return {
      ok: false,
      reason: "Name at least one of plan, seats or paymentMethod",
      checks: [],
    };
  }
  const existing = await workspace.subscription.get(businessId);
  const current = existing?.value ?? NO_SUBSCRIPTION;
  const plan = action.plan ?? current.plan;
  const seats = action.seats ?? current.seats;
  const next: Subscription = {
    ...current,
    plan,
    seats,
    status: plan === "none" ? "none" : current.status === "none" ? "active" : current.status,
    monthlyCents: PLAN_PRICES[plan] * Math.max(1, seats),
    paymentMethod: action.paymentMethod ?? current.paymentMethod,
    updatedAt: now(),
  };
  const parts = [
    action.plan !== null && `change the plan from ${current.plan} to ${plan}`,
    action.seats !== null && `set seats from ${current.seats} to ${seats}`,
    action.paymentMethod !== null && `replace the payment method with ${action.paymentMethod}`,
  ].filter((p): p is string => typeof p === "string");
  const sentence = parts.join(", ");
  return {
    ok: true,
    checks: [unchanged(workspace.subscription.key(businessId), existing)],
    mutations: [{ type: "set", key: workspace.subscription.key(businessId), value: next }],
    event: {
      type: "billing.change_approved",
      data: {
        plan: next.plan,
        seats: next.seats,
        paymentMethod: next.paymentMethod,
        monthlyCents: next.monthlyCents,
        previous: { plan: current.plan, seats: current.seats },
      },
    },
    outcome: `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}; the monthly price becomes ${
      money(next.monthlyCents)
    }`,
  };
}
