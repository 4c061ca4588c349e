/**
 * Human approval gates. A gated tool records what exactly would happen, mails the business's
 * owners, and stops; an owner approves or declines on the approval page; an approval applies
 * the change in the same commit that moves the gate out of `pending` and audits it, so it
 * happens once however often it is approved, and wholly or not at all. The decision is then delivered to the
 * requester (and can be redelivered).
 */
import type { EventOutbox, NewEvent } from "../../events/event_outbox.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Accounts } from "../../accounts/model.ts";
import type { Store } from "../../store/store.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { AuditLog } from "./audit.ts";
import type { AfterApproval, GateAction, PlanEvent, UpstreamCalls } from "./gate_actions.ts";
import { waitingNotice } from "./gate_handoffs.ts";
import { approvalRequestMails, deliverDecision } from "./gate_mails.ts";
import { describeAction, planAction } from "./gate_plans.ts";
import { readGateResult, storeGateResult } from "./gate_results.ts";
import { type Gate, gateKey, type GateView, pendingKey } from "./gate_record.ts";
import type { Workspace } from "./workspace.ts";

export interface GatesDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly accounts: Accounts;
  readonly workspace: Workspace;
  readonly audit: AuditLog;
  readonly mailer: MailOutbox;
  readonly events: EventOutbox;
  readonly authUrl: string;
  readonly upstreams: UpstreamCalls;
}

export interface GateRequest {
  readonly businessId: string;
  readonly accountId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly tool: string;
  readonly scope: string;
  readonly action: GateAction;
}

export type DecideResult =
  | { readonly kind: "not_found" }
  | { readonly kind: "forbidden" }
  | { readonly kind: "already_decided"; readonly gate: Gate }
  | { readonly kind: "decided"; readonly gate: Gate };

export interface Gates {
  /** `{auth_url}/approvals`, where an owner sees every approval of their businesses. */
  readonly approvalsUrl: string;
  approvalUrl(gateId: string): string;
  /** The gate as an agent reads it, without an approved call's result. */
  view(gate: Gate): GateView;
  /** The gate as an agent reads it, with an approved call's result (get_approval). */
  fullView(gate: Gate): Promise<GateView>;
  /** What an approved upstream call answered; null for other actions and while it runs. */
  result(gate: Gate): Promise<Readonly<Record<string, unknown>> | null>;
  /** Why the gate's change waits for the business's systems, or null (gate_handoffs.ts). */
  waiting(gate: Gate): string | null;
  /** Records a pending gate, or says why the request cannot be made as it stands. */
  request(request: GateRequest): Promise<{ ok: true; gate: Gate } | { ok: false; reason: string }>;
  get(gateId: string): Promise<Gate | null>;
  /** A business's gates, newest first. */
  list(businessId: string, options?: { readonly limit?: number }): Promise<Gate[]>;
  decide(gateId: string, accountId: string, decision: "approve" | "decline"): Promise<DecideResult>;
  /** Delivers an existing decision again; null when the gate is still pending. */
  redeliver(gate: Gate): Promise<Gate | null>;
}

const LATEST = 9_999_999_999_999;

export function createGates(deps: GatesDeps): Gates {
  const { store, now, accounts, audit } = deps;
  const approvalsUrl = `${deps.authUrl}/approvals`;
  // Orders gates of the same millisecond newest first too.
  let sequence = 0;
  const approvalUrl = (gateId: string) => `${approvalsUrl}/${gateId}`;

  const deliver = async (gate: Gate): Promise<Gate> => {
    const result = await deliverDecision(deps, gate, approvalUrl(gate.id));
    return await retryCommit(async () => {
      const entry = await store.get<Gate>(gateKey(gate.id));
      if (!entry) return gate;
      const updated: Gate = {
        ...entry.value,
        deliveries: entry.value.deliveries + 1,
        lastDeliveredAt: now(),
        lastDelivery: result,
      };
      const key = gateKey(gate.id);
      if (
        await store.commit([{ key, version: entry.version }], [{
          type: "set",
          key,
          value: updated,
        }])
      ) {
        return updated;
      }
      return RETRY;
    });
  };

  // The after-work's outcome on the gate, with its audit entry and its event: committed
  // whatever the result's size, which is kept apart first (gate_results.ts).
  const finish = async (gate: Gate, after: AfterApproval): Promise<Gate> => {
    let kept: { resultParts: number } | { note: string } | null = null;
    if (after.result !== null) {
      kept = await storeGateResult(store, gate, after.result).then(
        (resultParts) => ({ resultParts }),
        () => ({ note: "; its result could not be kept (the store refused it)" }),
      );
    }
    return await retryCommit(async () => {
      const entry = await store.get<Gate>(gateKey(gate.id));
      if (!entry) return gate;
      const finished: Gate = {
        ...entry.value,
        outcome: kept !== null && "note" in kept ? `${after.outcome}${kept.note}` : after.outcome,
        applied: entry.value.applied && after.ended === "done",
        ...(after.ended === "failed" ? { failed: true } : {}),
        ...(kept !== null && "resultParts" in kept ? { resultParts: kept.resultParts } : {}),
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
          audit.entry({
            businessId: gate.businessId,
            accountId: gate.requestedBy,
            actor: "agent",
            clientId: gate.clientId,
            action: gate.tool,
            summary: after.outcome,
            gateId: gate.id,
          }),
        ],
      );
      if (!ok) return RETRY;
      deps.events.dispatch();
      return finished;
    });
  };

  const waiting = (gate: Gate) => waitingNotice(gate, deps.events.delivers);

  const view = (gate: Gate): GateView => {
    const notice = waiting(gate);
    return {
      gateId: gate.id,
      status: gate.status,
      approvalUrl: approvalUrl(gate.id),
      tool: gate.tool,
      scope: gate.scope,
      summary: gate.summary,
      requestedAt: gate.createdAt,
      decidedAt: gate.decidedAt,
      applied: gate.applied,
      ...(gate.failed ? { failed: true } : {}),
      outcome: gate.outcome,
      delivery: {
        attempts: gate.deliveries,
        lastAt: gate.lastDeliveredAt,
        lastResult: gate.lastDelivery,
      },
      ...(notice === null ? {} : { waiting: notice }),
    };
  };

  return {
    approvalsUrl,
    approvalUrl,
    waiting,
    view,
    result: (gate) => readGateResult(store, gate),

    async fullView(gate) {
      const result = await readGateResult(store, gate);
      return { ...view(gate), ...(result === null ? {} : { result }) };
    },

    async request(request) {
      const described = await describeAction(deps, request.businessId, request.action);
      if (!described.ok) return described;
      sequence = (sequence + 1) % LATEST;
      const gate: Gate = {
        id: crypto.randomUUID(),
        businessId: request.businessId,
        requestedBy: request.accountId,
        clientId: request.clientId,
        clientName: request.clientName,
        tool: request.tool,
        scope: request.scope,
        action: request.action,
        summary: described.summary,
        status: "pending",
        createdAt: now(),
        decidedAt: null,
        decidedBy: null,
        applied: false,
        outcome: null,
        deliveries: 0,
        lastDeliveredAt: null,
        lastDelivery: null,
      };
      // The owners' notices are recorded with the gate: a gate never exists unannounced.
      const notices = await approvalRequestMails(deps, gate, approvalUrl(gate.id));
      await store.commit([{ key: gateKey(gate.id), version: null }], [
        { type: "set", key: gateKey(gate.id), value: gate },
        { type: "set", key: pendingKey(gate.id), value: gate.businessId },
        ...notices.flatMap((notice) => notice.mutations),
        {
          type: "set",
          key: ["ws", gate.businessId, "gate", LATEST - gate.createdAt, LATEST - sequence, gate.id],
          value: gate.id,
        },
        audit.entry({
          businessId: gate.businessId,
          accountId: gate.requestedBy,
          actor: "agent",
          clientId: gate.clientId,
          action: gate.tool,
          summary: `Asked for approval: ${gate.summary}`,
          gateId: gate.id,
        }),
      ]);
      await Promise.all(notices.map((notice) => deps.mailer.dispatch(notice.delivery)));
      return { ok: true, gate };
    },

    async get(gateId) {
      return (await store.get<Gate>(gateKey(gateId)))?.value ?? null;
    },

    async list(businessId, options = {}) {
      const gates: Gate[] = [];
      const prefix = ["ws", businessId, "gate"];
      for await (const pointer of store.list<string>(prefix, { limit: options.limit ?? 100 })) {
        const gate = await store.get<Gate>(gateKey(pointer.value));
        if (gate) gates.push(gate.value);
      }
      return gates;
    },

    decide(gateId, accountId, decision) {
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
          _decisionEvents(decided, plan?.ok ? plan.event : null),
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
              summary: outcome,
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
          ? await finish(decided, await plan.after(decided))
          : decided;
        return { kind: "decided", gate: await deliver(done) };
      });
    },

    async redeliver(gate) {
      if (gate.status === "pending") return null;
      return await deliver(gate);
    },
  };
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

/**
 * `approval.decided`, then the event of what an approval changed: each with the gate, the
 * deciding human, the requesting account and the agent (client) that asked.
 */
function _decisionEvents(gate: Gate, applied: PlanEvent | null): NewEvent[] {
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
