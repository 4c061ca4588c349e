/**
 * What a gated tool asks a human to approve: the actions, and the shape of a plan that applies
 * one (gate_plans.ts makes them).
 */
import * as v from "valibot";
import type { Accounts } from "../../accounts/model.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Delivery } from "../../outbox/delivery.ts";
import type { AtomicCheck, Entry, Key, Mutation } from "../../store/store.ts";
import { CONNECTION_KINDS, PLANS } from "./records.ts";
import { type Workspace } from "./workspace.ts";

const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));
const Count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max));

export const GateActionSchema = v.variant("type", [
  v.object({ type: v.literal("start_workflow"), workflowId: v.string() }),
  v.object({
    type: v.literal("create_trigger"),
    name: Text(100),
    event: Text(100),
    workflowId: v.string(),
  }),
  v.object({
    type: v.literal("change_connection"),
    change: v.picklist(["connect", "reconnect", "disconnect"]),
    kind: v.picklist(CONNECTION_KINDS),
    /** The existing connection for reconnect and disconnect; null to connect a new one. */
    connectionId: v.nullable(v.string()),
    service: Text(100),
    label: Text(200),
  }),
  v.object({
    type: v.literal("change_access"),
    change: v.picklist(["invite", "change_role", "remove"]),
    email: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.email()),
    role: v.picklist(["owner", "member"]),
  }),
  v.object({
    type: v.literal("grant_automation"),
    activities: v.record(v.string(), v.boolean()),
    automaticActions: v.object({
      enabled: v.boolean(),
      maxPerDay: Count(10_000),
      maxAmountCents: Count(100_000_000),
    }),
  }),
  v.object({
    type: v.literal("install_skill"),
    name: Text(100),
    description: Text(500),
    instructions: Text(8_000),
  }),
  v.object({
    type: v.literal("reconcile_effect"),
    effectId: v.string(),
    resolution: v.picklist(["applied", "not_applied", "retry"]),
  }),
  v.object({
    type: v.literal("change_billing"),
    plan: v.nullable(v.picklist(PLANS)),
    seats: v.nullable(Count(10_000)),
    paymentMethod: v.nullable(Text(100)),
  }),
  /** A gated upstream tool's call, made once on approval. */
  v.object({
    type: v.literal("call_upstream"),
    upstream: v.string(),
    /** The upstream's own name of the tool. */
    tool: v.string(),
    arguments: v.record(v.string(), v.unknown()),
    /** SHA-256 of the canonical arguments (src/canonical_json.ts). */
    argumentsSha256: v.string(),
    /** Approved after this (epoch ms), the call is not made. */
    expiresAt: v.number(),
    /**
     * SHA-256 of the tool's definition pinned for the business when the call was requested:
     * the definition the owner reads; approved under another, the call is not made. Absent in
     * requests recorded before it was.
     */
    definitionSha256: v.optional(v.string()),
    /**
     * The W3C traceparent of the request that asked, when tracing was on: the call made on
     * approval links back to that trace. Ids only, no data.
     */
    trace: v.optional(v.pipe(v.string(), v.regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/))),
  }),
  /**
   * Serving what an upstream changed at once: the tools held under this gate (their holds name
   * it, upstream_pins.ts), each changed or new since the business pinned its tools. The owner
   * approves them all or leaves some out; the definitions stay in the holds, never in the gate.
   */
  v.object({
    type: v.literal("approve_tool_definitions"),
    upstream: v.string(),
    /** How many changed and new tools the change held when it was asked. */
    changed: Count(1_000_000),
    new: Count(1_000_000),
    /** The tool's name when the change holds one tool (its announcement names it). */
    tool: v.optional(v.string()),
  }),
  /**
   * One tool's changed or new definition, carried whole with the one it replaces: gates of
   * earlier releases, still decided as they were asked. None is asked any more: one gate per
   * tool mailed the owners once per tool, and two large definitions made a gate no store holds.
   */
  v.object({
    type: v.literal("approve_tool_definition"),
    upstream: v.string(),
    tool: v.string(),
    change: v.picklist(["changed", "new"]),
    definition: v.record(v.string(), v.unknown()),
    hash: v.string(),
    /** The pinned definition it replaces; null for a new tool. */
    previous: v.nullable(v.record(v.string(), v.unknown())),
  }),
]);
export type GateAction = v.InferOutput<typeof GateActionSchema>;
export type ActionOf<T extends GateAction["type"]> = Extract<GateAction, { type: T }>;
/** Who approved, and the gate: what a planner records of the decision. */
export type Approval = { readonly accountId: string; readonly gateId: string };

/** The check that a record read at `key` (or found absent) is still as it was read. */
export const unchanged = (key: Key, entry: Entry<unknown> | null): AtomicCheck => ({
  key,
  version: entry?.version ?? null,
});

export interface PlanDeps {
  readonly workspace: Workspace;
  readonly accounts: Accounts;
  readonly now: () => number;
  /** Records the mail an action promises (an invitation) in the decision's own commit. */
  readonly mailer: Pick<MailOutbox, "record">;
  readonly authUrl: string;
  /** The gateway's upstreams, for approved upstream calls; none without VESTIBULE_UPSTREAMS. */
  readonly upstreams: UpstreamCalls;
}

/** The gateway as approvals see it (src/gateway/upstream_tools.ts answers for it). */
export interface UpstreamCalls {
  /** The upstream's title when it is configured and serves the business; else null. */
  title(upstream: string, businessId: string): string | null;
  /**
   * What the upstream lists now of one of its tools: its definition's hash, or that the
   * operator hides it, that it is not listed, or that nothing was listed yet (unknown).
   */
  listed(
    upstream: string,
    tool: string,
  ): { readonly hash: string } | "hidden" | "unlisted" | "unknown";
  /** Whether each call of the upstream's tool needs an owner's approval (its `gated` list). */
  gated(upstream: string, tool: string): boolean;
  /** Makes an approved call, once, and says how it went. */
  callApproved(
    gate: ApprovedGate,
    action: Extract<GateAction, { type: "call_upstream" }>,
  ): Promise<AfterApproval>;
}

/** Who asked for a gate, and for what: what an approval's after-work needs of it. */
export interface ApprovedGate {
  readonly id: string;
  readonly businessId: string;
  /** The account whose token asked for it. */
  readonly requestedBy: string;
  readonly clientId: string;
  /** The client's name as the human saw it at consent. */
  readonly clientName: string;
  readonly tool: string;
}

/** What an approval did after its commit (an upstream call), recorded on the gate. */
export interface AfterApproval {
  /** In words, with what the owner or the agent can do next when it did not succeed. */
  readonly outcome: string;
  /**
   * `done`; `failed`: attempted, and it failed (the gate reads failed); `refused`: not attempted,
   * since what the owner approved no longer holds (the gate reads not applied).
   */
  readonly ended: "done" | "failed" | "refused";
  /** What the agent reads with get_approval: the upstream's result as it came; null if none. */
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly event: PlanEvent;
}

/** For services built without a gateway: no upstream is configured. */
export const NO_UPSTREAM_CALLS: UpstreamCalls = Object.freeze({
  title: () => null,
  listed: () => "unlisted",
  gated: () => false,
  callApproved: () => Promise.reject(new Error("no upstream is configured")),
});

/**
 * The writes of an approved action, or why it can no longer be applied; either way with
 * the checks that the records it was read from are unchanged.
 */
export type Plan =
  | {
    readonly ok: true;
    readonly checks: readonly AtomicCheck[];
    readonly mutations: readonly Mutation[];
    /** What happened, in words, for the gate and the audit log. */
    readonly outcome: string;
    /** Outbox deliveries the mutations record, to be sent once they are committed. */
    readonly deliveries?: readonly Delivery[];
    /** The event announcing the change (its data beside what every gate event carries). */
    readonly event: PlanEvent;
    /** Work outside the store, done once after the decision's commit (an upstream call). */
    readonly after?: (gate: ApprovedGate) => Promise<AfterApproval>;
  }
  | { readonly ok: false; readonly reason: string; readonly checks: readonly AtomicCheck[] };

/** docs/integrating.md "Events" lists these types and their data. */
export interface PlanEvent {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export const PLAN_PRICES: Readonly<Record<(typeof PLANS)[number], number>> = {
  none: 0,
  starter: 4_900,
  growth: 19_900,
  scale: 79_900,
};
