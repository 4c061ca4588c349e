// A pending gate decided: approved (its change planned as things now stand and applied in the
// same commit that moves the gate out of `pending`, audited, its event recorded), declined, or
// withdrawn by the agent that asked. Each commit checks what its plan read, so a gate is decided
// once however often it is approved, and wholly or not at all.
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { PlanDeps } from "./gate_actions.ts";
import { type Gate, gateKey, pendingKey } from "./gate_record.ts";
import { decisionEvents, finishGate, type GateOutcomeDeps } from "./gate_outcomes.ts";
import { planAction } from "./gate_plans.ts";
import { decisionWords } from "./gate_words.ts";

/** What deciding reads and writes: the plans' records, the outcomes' mails, events and audit. */
export type DecisionDeps = PlanDeps & GateOutcomeDeps;

export type DecideResult =
  | { readonly kind: "not_found" }
  | { readonly kind: "forbidden" }
  | { readonly kind: "already_decided"; readonly gate: Gate }
  | { readonly kind: "decided"; readonly gate: Gate };

/** What deciding needs of the gates besides their dependencies. */
export interface DecisionHelpers {
  readonly upstreamTitle: (gate: Gate) => string | null;
  /** Delivers the decision to the requester; the gate as it then stands. */
  readonly deliver: (gate: Gate) => Promise<Gate>;
}

export function decideGate(
  deps: DecisionDeps,
  helpers: DecisionHelpers,
  gateId: string,
  accountId: string,
  decision: "approve" | "decline",
): Promise<DecideResult> {
  const { store, now, accounts, audit } = deps;
  return retryCommit(async () => {
    const entry = await store.get<Gate>(gateKey(gateId));
    if (!entry) return { kind: "not_found" };
    const gate = entry.value;
    const decider = await accounts.readMembership(accountId, gate.businessId);
    if (decider.membership?.role !== "owner") return { kind: "forbidden" };
    if (gate.status !== "pending") return { kind: "already_decided", gate };

    const plan = decision === "approve"
      ? await planAction(deps, gate.businessId, gate.action, { accountId, gateId })
      : null;
    const applied = plan?.ok === true;
    const outcome = plan === null
      ? "Declined; nothing was changed"
      : plan.ok
      ? plan.outcome
      : `Approved, but not applied: ${plan.reason}`;
    const decided: Gate = {
      ...gate,
      status: decision === "approve" ? "approved" : "declined",
      decidedAt: now(),
      decidedBy: accountId,
      applied,
      outcome,
    };
    const events = await deps.events.record(
      gate.businessId,
      decisionEvents(decided, plan?.ok ? plan.event : null),
    );
    // The decision stands only as read: the gate still pending, the decider still an
    // owner, the records the plan read unchanged (two approvals each removing one of two
    // owners must not both pass the last-owner rule).
    const ok = await store.commit(
      [
        { key: entry.key, version: entry.version },
        decider.check,
        ...(plan?.checks ?? []),
        ...events.checks,
      ],
      [
        { type: "set", key: entry.key, value: decided },
        { type: "delete", key: pendingKey(gateId) },
        ...(plan?.ok ? plan.mutations : []),
        ...events.mutations,
        audit.entry({
          businessId: gate.businessId,
          accountId,
          actor: "human",
          clientId: gate.clientId,
          action: decision,
          summary: decisionWords(decided, helpers.upstreamTitle(decided)),
          gateId,
        }),
      ],
    );
    // A failed commit means the gate or a record it reads changed: decide again from scratch.
    if (!ok) return RETRY;
    deps.events.dispatch();
    for (const mail of plan?.ok ? plan.deliveries ?? [] : []) await deps.mailer.dispatch(mail);
    // Only the process whose commit decided runs the after-work: it happens once.
    const done = plan?.ok && plan.after
      ? await finishGate(deps, decided, await plan.after(decided))
      : decided;
    return { kind: "decided", gate: await helpers.deliver(done) };
  });
}

/**
 * The asking agent takes its pending request back (tasks/cancel): the gate becomes `withdrawn`,
 * which no owner can approve; a gate already decided is returned unchanged.
 */
export function withdrawGate(deps: DecisionDeps, gate: Gate): Promise<Gate> {
  const { store, now, audit } = deps;
  return retryCommit(async () => {
    const entry = await store.get<Gate>(gateKey(gate.id));
    if (!entry) return gate;
    if (entry.value.status !== "pending") return entry.value;
    const withdrawn: Gate = {
      ...entry.value,
      status: "withdrawn",
      decidedAt: now(),
      decidedBy: entry.value.requestedBy,
      outcome: "Withdrawn by the agent that asked; nothing was done",
    };
    const events = await deps.events.record(gate.businessId, decisionEvents(withdrawn, null));
    const ok = await store.commit(
      [{ key: entry.key, version: entry.version }, ...events.checks],
      [
        { type: "set", key: entry.key, value: withdrawn },
        { type: "delete", key: pendingKey(gate.id) },
        ...events.mutations,
        audit.entry({
          businessId: gate.businessId,
          accountId: gate.requestedBy,
          actor: "agent",
          clientId: gate.clientId,
          action: "withdraw",
          summary: `Withdrew the request for approval: ${gate.summary}`,
          gateId: gate.id,
        }),
      ],
    );
    if (!ok) return RETRY;
    deps.events.dispatch();
    return withdrawn;
  });
}
