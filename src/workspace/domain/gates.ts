/**
 * Human approval gates. A gated tool records what exactly would happen, mails the business's
 * owners, and stops; an owner approves or declines on the approval page; an approval applies
 * the change in the same commit that moves the gate out of `pending` and audits it, so it
 * happens once however often it is approved, and wholly or not at all (gate_decisions.ts). The
 * decision is then delivered to the requester (and can be redelivered).
 */
import type { EventOutbox } from "../../events/event_outbox.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Accounts } from "../../accounts/model.ts";
import type { Store } from "../../store/store.ts";
import type { AuditLog } from "./audit.ts";
import type { GateAction, UpstreamCalls } from "./gate_actions.ts";
import { waitingNotice } from "./gate_handoffs.ts";
import { approvalRequestMails } from "./gate_mails.ts";
import { decideGate, type DecideResult, withdrawGate } from "./gate_decisions.ts";
import { deliverGate } from "./gate_outcomes.ts";
import { describeAction } from "./gate_plans.ts";
import { readGateResult } from "./gate_results.ts";
import { type Gate, gateKey, type GateView, gateView, pendingKey } from "./gate_record.ts";
import type { Workspace } from "./workspace.ts";
import { gateHeadline } from "./gate_words.ts";

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
  /** The gate in one line, as the approvals list and mail subjects show it (gate_words.ts). */
  headline(gate: Gate): string;
  /** The title of the upstream the gate is about, when it serves the business; else null. */
  upstreamTitle(gate: Gate): string | null;
  /** Why the gate's change waits for the business's systems, or null (gate_handoffs.ts). */
  waiting(gate: Gate): string | null;
  /**
   * Why approving a pending gate would not apply it as things stand (a held or hidden upstream
   * tool, a paused workflow), read as a decision would read it; null when it would, or decided.
   */
  refusal(gate: Gate): Promise<string | null>;
  /** Records a pending gate, or says why the request cannot be made as it stands. */
  request(request: GateRequest): Promise<{ ok: true; gate: Gate } | { ok: false; reason: string }>;
  get(gateId: string): Promise<Gate | null>;
  /** A business's gates, newest first. */
  list(businessId: string, options?: { readonly limit?: number }): Promise<Gate[]>;
  decide(gateId: string, accountId: string, decision: "approve" | "decline"): Promise<DecideResult>;
  /** Delivers an existing decision again; null when there is none (pending, or withdrawn). */
  redeliver(gate: Gate): Promise<Gate | null>;
  /**
   * The asking agent takes its pending request back (tasks/cancel): the gate becomes
   * `withdrawn`, which no owner can approve; a gate already decided is returned unchanged.
   */
  withdraw(gate: Gate): Promise<Gate>;
}

const LATEST = 9_999_999_999_999;

export function createGates(deps: GatesDeps): Gates {
  const { store, now, audit } = deps;
  const approvalsUrl = `${deps.authUrl}/approvals`;
  // Orders gates of the same millisecond newest first too.
  let sequence = 0;
  const approvalUrl = (gateId: string) => `${approvalsUrl}/${gateId}`;

  const waiting = (gate: Gate) => waitingNotice(gate, deps.events.delivers);

  const view = (gate: Gate) => gateView(gate, approvalUrl(gate.id), waiting(gate));

  const upstreamTitle = (gate: Gate) =>
    "upstream" in gate.action ? deps.upstreams.title(gate.action.upstream, gate.businessId) : null;

  const deliver = (gate: Gate) =>
    deliverGate(deps, gate, approvalUrl(gate.id), upstreamTitle(gate));

  return {
    approvalsUrl,
    approvalUrl,
    waiting,
    view,
    upstreamTitle,
    headline: (gate) => gateHeadline(gate, upstreamTitle(gate)),
    result: (gate) => readGateResult(store, gate),

    async fullView(gate) {
      const result = await readGateResult(store, gate);
      return { ...view(gate), ...(result === null ? {} : { result }) };
    },

    async refusal(gate) {
      if (gate.status !== "pending") return null;
      const described = await describeAction(deps, gate.businessId, gate.action);
      return described.ok ? null : described.reason;
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
      const notices = await approvalRequestMails(
        deps,
        gate,
        approvalUrl(gate.id),
        upstreamTitle(gate),
      );
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

    decide: (gateId, accountId, decision) =>
      decideGate(deps, { upstreamTitle, deliver }, gateId, accountId, decision),

    async redeliver(gate) {
      if (gate.status === "pending" || gate.status === "withdrawn") return null;
      return await deliver(gate);
    },

    withdraw: (gate) => withdrawGate(deps, gate),
  };
}
