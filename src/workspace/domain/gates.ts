/**
 * Human approval gates. A gated tool records what exactly would happen, mails the business's
 * owners, and stops; an owner approves or declines on the approval page; an approval applies
 * the change in the same commit that moves the gate out of `pending` and audits it, so it
 * happens once however often it is approved, and wholly or not at all. The decision is then delivered to the
 * requester (and can be redelivered).
 */
import * as v from "valibot";
import type { EventOutbox, NewEvent } from "../../events/event_outbox.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import { composeMail } from "../../mail/compose.ts";
import type { Accounts } from "../../accounts/model.ts";
import type { Key, Store } from "../../store/store.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { AuditLog } from "./audit.ts";
import {
  type AfterApproval,
  type ApprovedGate,
  type GateAction,
  type PlanEvent,
  type UpstreamCalls,
} from "./gate_actions.ts";
import { waitingNotice } from "./gate_handoffs.ts";
import { describeAction, planAction } from "./gate_plans.ts";
import { DEFAULT_NOTIFICATION_SETTINGS, type Workspace } from "./workspace.ts";

export interface Gate extends ApprovedGate {
  readonly scope: string;
  readonly action: GateAction;
  /** Exactly what approving does, as shown to the owner. */
  readonly summary: string;
  readonly status: "pending" | "approved" | "declined";
  readonly createdAt: number;
  readonly decidedAt: number | null;
  readonly decidedBy: string | null;
  /** Whether an approval changed anything (false when the request no longer applied). */
  readonly applied: boolean;
  readonly outcome: string | null;
  readonly deliveries: number;
  readonly lastDeliveredAt: number | null;
  readonly lastDelivery: string | null;
  /**
   * What an approved upstream call answered, as it came; absent for other actions, and while
   * the call is under way (or when the process stopped during it: its outcome is unknown).
   */
  readonly result?: Readonly<Record<string, unknown>>;
}

/** How a gate reads to an agent (`get_approval`, gated tools' results). */
export const GateViewSchema = v.object({
  gateId: v.string(),
  status: v.picklist(["pending", "approved", "declined"]),
  approvalUrl: v.string(),
  tool: v.string(),
  scope: v.string(),
  summary: v.string(),
  requestedAt: v.number(),
  decidedAt: v.nullable(v.number()),
  applied: v.boolean(),
  outcome: v.nullable(v.string()),
  delivery: v.object({
    attempts: v.number(),
    lastAt: v.nullable(v.number()),
    lastResult: v.nullable(v.string()),
  }),
  /** An approved upstream call's result, as the upstream answered it. */
  result: v.optional(v.record(v.string(), v.unknown())),
  /**
   * Why nothing will carry the change out yet (gate_handoffs.ts): no event receiver tells the
   * business's systems, which do it. Absent when nothing waits.
   */
  waiting: v.optional(v.string()),
});
export type GateView = v.InferOutput<typeof GateViewSchema>;

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
  view(gate: Gate): GateView;
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
const _gateKey = (id: string) => ["gate", id];
/**
 * The pending gates, id to business id: written with the gate, deleted in the commit that
 * decides it, so counting what waits for a human reads only what waits (store migration 3).
 */
const PENDING_PREFIX = ["gate_pending"] as const;
const _pendingKey = (id: string): Key => [...PENDING_PREFIX, id];

/**
 * The gate records of a business, with their pending marks; its index lies under
 * `["ws", businessId]` (its deletion).
 */
export async function gateKeysOf(store: Store, businessId: string): Promise<Key[]> {
  const keys: Key[] = [];
  for await (const pointer of store.list<string>(["ws", businessId, "gate"])) {
    keys.push(_gateKey(pointer.value));
  }
  for await (const mark of store.list<string>(PENDING_PREFIX)) {
    if (mark.value === businessId) keys.push(mark.key);
  }
  return keys;
}

/** Gates waiting for a human's decision, in every business. */
export async function countPendingGates(store: Store): Promise<number> {
  let pending = 0;
  for await (const _ of store.list(PENDING_PREFIX)) pending++;
  return pending;
}

export function createGates(deps: GatesDeps): Gates {
  const { store, now, accounts, audit } = deps;
  const approvalsUrl = `${deps.authUrl}/approvals`;
  // Orders gates of the same millisecond newest first too.
  let sequence = 0;
  const approvalUrl = (gateId: string) => `${approvalsUrl}/${gateId}`;

  const deliver = async (gate: Gate): Promise<Gate> => {
    const result = await _deliverDecision(deps, gate, approvalUrl(gate.id));
    return await retryCommit(async () => {
      const entry = await store.get<Gate>(_gateKey(gate.id));
      if (!entry) return gate;
      const updated: Gate = {
        ...entry.value,
        deliveries: entry.value.deliveries + 1,
        lastDeliveredAt: now(),
        lastDelivery: result,
      };
      const key = _gateKey(gate.id);
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

  // The after-work's outcome on the gate, with its audit entry and its event.
  const finish = (gate: Gate, after: AfterApproval): Promise<Gate> =>
    retryCommit(async () => {
      const entry = await store.get<Gate>(_gateKey(gate.id));
      if (!entry) return gate;
      const finished: Gate = { ...entry.value, outcome: after.outcome, result: after.result };
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

  const waiting = (gate: Gate) => waitingNotice(gate, deps.events.delivers);

  return {
    approvalsUrl,
    approvalUrl,
    waiting,
    view(gate) {
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
        outcome: gate.outcome,
        delivery: {
          attempts: gate.deliveries,
          lastAt: gate.lastDeliveredAt,
          lastResult: gate.lastDelivery,
        },
        ...(gate.result ? { result: gate.result } : {}),
        ...(notice === null ? {} : { waiting: notice }),
      };
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
      const notices = await _approvalRequestMails(deps, gate, approvalUrl(gate.id));
      await store.commit([{ key: _gateKey(gate.id), version: null }], [
        { type: "set", key: _gateKey(gate.id), value: gate },
        { type: "set", key: _pendingKey(gate.id), value: gate.businessId },
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
      return (await store.get<Gate>(_gateKey(gateId)))?.value ?? null;
    },

    async list(businessId, options = {}) {
      const gates: Gate[] = [];
      const prefix = ["ws", businessId, "gate"];
      for await (const pointer of store.list<string>(prefix, { limit: options.limit ?? 100 })) {
        const gate = await store.get<Gate>(_gateKey(pointer.value));
        if (gate) gates.push(gate.value);
      }
      return gates;
    },

    decide(gateId, accountId, decision) {
      return retryCommit(async () => {
        const entry = await store.get<Gate>(_gateKey(gateId));
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
            { type: "delete", key: _pendingKey(gateId) },
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

/**
 * One mail per owner of the business, whatever their notification settings (those govern
 * decision notices; nothing happens here until an owner acts): what approving would do, which
 * agent asked for whom, and the approval page, which needs the owner signed in, so the link
 * carries no secret.
 */
async function _approvalRequestMails(
  deps: GatesDeps,
  gate: Gate,
  link: string,
): Promise<ReturnType<MailOutbox["record"]>[]> {
  const [business, requester, members] = await Promise.all([
    deps.accounts.getBusiness(gate.businessId),
    deps.accounts.getAccount(gate.requestedBy),
    deps.accounts.listMembers(gate.businessId),
  ]);
  const businessName = business?.name ?? "your business";
  const agent = requester
    ? `${requester.email}'s agent "${gate.clientName}"`
    : `The agent "${gate.clientName}"`;
  return members.filter(({ role }) => role === "owner").map(({ account }) =>
    deps.mailer.record(composeMail({
      to: account.email,
      // The approval's own words (its summary names the workflow or tool and the cost).
      subject: `Approval needed in ${businessName}: ${_subjectPart(gate.summary)}`,
      heading: `${agent} asks for your approval in "${businessName}"`,
      paragraphs: [
        _sentence(`Approving would: ${gate.summary}`),
        `Nothing happens unless an owner approves. Sign in to approve or decline.`,
      ],
      action: { label: "Review the request", url: link },
      reason: `You get this because you are an owner of "${businessName}" on Vestibule, ` +
        `and every owner is asked.`,
      origin: deps.authUrl,
    }))
  );
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

/** Sends the decision to the requester as their notification settings say; returns what happened. */
async function _deliverDecision(deps: GatesDeps, gate: Gate, link: string): Promise<string> {
  const settings =
    (await deps.workspace.notificationSettings.get(gate.businessId, gate.requestedBy))
      ?.value ?? DEFAULT_NOTIFICATION_SETTINGS;
  if (!settings.approvalEmails) {
    return "not sent: approval e-mails are off in the requester's settings";
  }
  const account = await deps.accounts.getAccount(gate.requestedBy);
  if (!account) return "not sent: the requesting account no longer exists";
  const business = await deps.accounts.getBusiness(gate.businessId);
  const businessName = business?.name ?? "your business";
  const verdict = gate.status === "approved" ? "Approved" : "Declined";
  const { delivery, mutations } = deps.mailer.record(composeMail({
    to: account.email,
    subject: `${verdict} in ${businessName}: ${_subjectPart(gate.summary)}`,
    heading: `An owner ${verdict.toLowerCase()} what your agent "${gate.clientName}" asked ` +
      `for in "${businessName}"`,
    paragraphs: [
      _sentence(`The request: ${gate.summary}`),
      gate.status === "declined"
        ? "Nothing was changed."
        : gate.applied
        ? _sentence(`Done: ${gate.outcome ?? gate.summary}`)
        : _sentence(gate.outcome ?? "Approved, but not applied"),
    ],
    action: { label: "See the approval", url: link },
    reason: `You get this because your agent asked for this approval in "${businessName}" and ` +
      `your approval e-mails are on (the notification settings of your agents' tools).`,
    origin: deps.authUrl,
  }));
  await deps.store.commit([], mutations);
  const state = await deps.mailer.dispatch(delivery);
  if (state === "sent") return `e-mailed to ${account.email}`;
  if (state === "failed") {
    return "failed: the mail could not be sent; retry with redeliver_decision";
  }
  // Recorded but not yet accepted by the mail server: the outbox keeps retrying it.
  return `queued for ${account.email}: not sent yet, the outbox retries it`;
}

/** A summary short enough for a subject line (the mail's first lines carry it whole). */
function _subjectPart(summary: string): string {
  return summary.length <= 90 ? summary : `${summary.slice(0, 89).trimEnd()}…`;
}

/** Text that ends as a sentence does, whether or not it came with its full stop. */
const _sentence = (text: string) => /[.!?]$/.test(text) ? text : `${text}.`;
