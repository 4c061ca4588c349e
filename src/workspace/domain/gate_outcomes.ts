/**
 * What follows a gate's decision (gates.ts decides): its events, the outcome of the work done
 * after the decision's commit (an upstream call) with its audit entry, and the decision's
 * delivery to the requester.
 */
import type { EventOutbox, NewEvent } from "../../events/event_outbox.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { AuditLog } from "./audit.ts";
import type { AfterApproval, PlanEvent } from "./gate_actions.ts";
import { deliverDecision, type GateMailDeps } from "./gate_mails.ts";
import { type Gate, gateKey } from "./gate_record.ts";
import { storeGateResult } from "./gate_results.ts";

export interface GateOutcomeDeps extends GateMailDeps {
  readonly now: () => number;
  readonly audit: AuditLog;
  readonly events: EventOutbox;
}

/**
 * The after-work's outcome on the gate, with its audit entry and its event, in one commit of
 * the same size whatever the result's: the result is kept apart first (gate_results.ts), and if
 * it cannot be, the outcome says so and the rest is committed all the same.
 */
export async function finishGate(
  deps: GateOutcomeDeps,
  gate: Gate,
  after: AfterApproval,
): Promise<Gate> {
  const { store } = deps;
  let resultParts: number | null = null;
  let outcome = after.outcome;
  if (after.result !== null) {
    try {
      resultParts = await storeGateResult(store, gate, after.result);
    } catch {
      outcome = `${outcome}; its result could not be kept (the store refused it)`;
    }
  }
  return await retryCommit(async () => {
    const entry = await store.get<Gate>(gateKey(gate.id));
    if (!entry) return gate;
    const finished: Gate = {
      ...entry.value,
      outcome,
      applied: entry.value.applied && after.ended === "done",
      ...(after.ended === "failed" ? { failed: true } : {}),
      ...(resultParts === null ? {} : { resultParts }),
    };
    const events = await deps.events.record(gate.businessId, [{
      type: after.event.type,
      data: { ..._eventCommon(gate), ...after.event.data },
    }]);
    const ok = await store.commit(
      [{ key: entry.key, version: entry.version }, ...events.checks],
      [
        { type: "set", key: entry.key, value: finished },
        ...events.mutations,
        deps.audit.entry({
          businessId: gate.businessId,
          accountId: gate.requestedBy,
          actor: "agent",
          clientId: gate.clientId,
          action: gate.tool,
          summary: outcome,
          gateId: gate.id,
        }),
      ],
    );
    if (!ok) return RETRY;
    deps.events.dispatch();
    return finished;
  });
}

/** Sends the decision to the requester and records how that went on the gate. */
export async function deliverGate(
  deps: GateOutcomeDeps,
  gate: Gate,
  link: string,
  title: string | null,
): Promise<Gate> {
  const { store, now } = deps;
  const result = await deliverDecision(deps, gate, link, title);
  return await retryCommit(async () => {
    const key = gateKey(gate.id);
    const entry = await store.get<Gate>(key);
    if (!entry) return gate;
    const updated: Gate = {
      ...entry.value,
      deliveries: entry.value.deliveries + 1,
      lastDeliveredAt: now(),
      lastDelivery: result,
    };
    const ok = await store.commit([{ key, version: entry.version }], [
      { type: "set", key, value: updated },
    ]);
    return ok ? updated : RETRY;
  });
}

/**
 * `approval.decided`, then the event of what an approval changed: each with the gate, the
 * deciding human, the requesting account and the agent (client) that asked.
 */
export function decisionEvents(gate: Gate, applied: PlanEvent | null): NewEvent[] {
  const common = _eventCommon(gate);
  const decided: NewEvent = {
    type: "approval.decided",
    data: {
      ...common,
      decision: gate.status,
      tool: gate.tool,
      scope: gate.scope,
      summary: gate.summary,
      applied: gate.applied,
      outcome: gate.outcome,
    },
  };
  return applied === null
    ? [decided]
    : [decided, { type: applied.type, data: { ...common, ...applied.data } }];
}

/** What every event about a gate carries: the gate, the deciding human, the asker and its agent. */
function _eventCommon(gate: Gate) {
  return {
    businessId: gate.businessId,
    gateId: gate.id,
    decidedBy: gate.decidedBy,
    requestedBy: gate.requestedBy,
    clientId: gate.clientId,
    clientName: gate.clientName,
  };
}
