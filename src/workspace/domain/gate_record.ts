/**
 * A gate as stored, how it reads to an agent, who may read it, and where its records lie
 * (gates.ts requests and decides them).
 */
import * as v from "valibot";
import type { Key, Store } from "../../store/store.ts";
import type { ApprovedGate, GateAction } from "./gate_actions.ts";

export interface Gate extends ApprovedGate {
  readonly scope: string;
  readonly action: GateAction;
  /** Exactly what approving does, as shown to the owner. */
  readonly summary: string;
  /** `withdrawn`: the asking agent took the request back (tasks/cancel) before a decision. */
  readonly status: "pending" | "approved" | "declined" | "withdrawn";
  readonly createdAt: number;
  readonly decidedAt: number | null;
  readonly decidedBy: string | null;
  /**
   * Whether an approval changed anything: false when the request no longer applied, and when
   * the work done after the decision (an upstream call) failed or could not be made.
   */
  readonly applied: boolean;
  /** Set when the approved work was attempted and failed (an upstream call that failed). */
  readonly failed?: boolean;
  readonly outcome: string | null;
  readonly deliveries: number;
  readonly lastDeliveredAt: number | null;
  readonly lastDelivery: string | null;
  /**
   * What an approved upstream call answered, kept whole on the gate by earlier versions; newer
   * gates keep it apart (gate_results.ts) and say how in `resultParts`.
   */
  readonly result?: Readonly<Record<string, unknown>>;
  /**
   * How many records hold the approved call's result (gate_results.ts); absent for other
   * actions, and while the call is under way (or when the process stopped during it: its
   * outcome is unknown).
   */
  readonly resultParts?: number;
}

/** How a gate reads to an agent (`get_approval`, gated tools' results). */
export const GateViewSchema = v.object({
  gateId: v.string(),
  status: v.picklist(["pending", "approved", "declined", "withdrawn"]),
  approvalUrl: v.string(),
  tool: v.string(),
  scope: v.string(),
  summary: v.string(),
  requestedAt: v.number(),
  decidedAt: v.nullable(v.number()),
  applied: v.boolean(),
  /** True when the approved work was attempted and failed (an upstream call): see `outcome`. */
  failed: v.optional(v.boolean()),
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

/** The gate as an agent reads it, without an approved call's result (gates.ts fullView adds it). */
export function gateView(gate: Gate, approvalUrl: string, waiting: string | null): GateView {
  return {
    gateId: gate.id,
    status: gate.status,
    approvalUrl,
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
    ...(waiting === null ? {} : { waiting }),
  };
}

/**
 * Who reads a gate (its page, get_approval, redeliver_decision): the person whose agent asked
 * for it, and the business's owners. A member reads none of another's requests, nor what an
 * upstream answered someone else's account (docs/workspace.md "Who reads an approval").
 */
export function readableBy(
  gate: Pick<Gate, "requestedBy">,
  reader: { readonly accountId: string; readonly role: "owner" | "member" },
): boolean {
  return reader.role === "owner" || gate.requestedBy === reader.accountId;
}

export const gateKey = (id: string): Key => ["gate", id];
/**
 * The pending gates, id to business id: written with the gate, deleted in the commit that
 * decides it, so counting what waits for a human reads only what waits (store migration 3).
 */
const PENDING_PREFIX = ["gate_pending"] as const;
export const pendingKey = (id: string): Key => [...PENDING_PREFIX, id];

/**
 * The gate records of a business, with their pending marks; its index and results lie
 * under `["ws", businessId]` (its deletion).
 */
export async function gateKeysOf(store: Store, businessId: string): Promise<Key[]> {
  const keys: Key[] = [];
  for await (const pointer of store.list<string>(["ws", businessId, "gate"])) {
    keys.push(gateKey(pointer.value));
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
