/**
 * How the outbox keeps a delivery (outbox.ts): its record, its keys in the store, when it is due,
 * and the due index entries that follow its state.
 */
import type { Key, Mutation } from "../store/store.ts";

export type DeliveryState = "pending" | "sending" | "sent" | "failed";

export interface Delivery {
  readonly id: string;
  /** Which sender handles it: "mail". */
  readonly kind: string;
  /** What the handler needs; cleared once sent, since it may carry a live link. */
  readonly payload: unknown;
  /** What an operator sees in listings: never a link or a secret ("to: subject"). */
  readonly label: string;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly createdAt: number;
  /** When a pending delivery may be tried (again). */
  readonly nextAttemptAt: number;
  /** While sending: the claimer's token and when its claim lapses. */
  readonly claim: { readonly token: string; readonly until: number } | null;
  /** Past this moment the delivery is given up, not sent (the link it carries has expired). */
  readonly expiresAt: number | null;
  readonly lastError: string | null;
  /** A record whose `delivery` field follows this delivery's state (an invitation). */
  readonly reportTo: Key | null;
  /** The ordered queue it belongs to and its place there; absent: sent in any order. */
  readonly queue?: { readonly name: string; readonly sequence: number };
  /**
   * Its time in the index of due deliveries; absent while it waits behind its queue's head, and
   * once finished.
   */
  readonly due?: number;
}

/** The index's lanes: deliveries without a queue (mail), and the heads of queues (events). */
export type Lane = "direct" | "queue";

/** An entry of the due index: the delivery it names and the index key to clear if it is gone. */
export interface DueItem {
  readonly id: string;
  readonly key: Key;
}

/**
 * What a due entry holds beside its key (lane, time, id): enough to count what waits without
 * reading the deliveries.
 */
export interface DueMark {
  readonly state: DeliveryState;
  readonly queue?: { readonly name: string; readonly sequence: number };
}

/** What a delivery whose link died before it could go records (and the sender logs). */
export const LINK_EXPIRED = "link expired before it could be sent";

/** Longer than the slowest delivery attempt (the SMTP transport's timeouts add up to less). */
export const LEASE_MS = 2 * 60 * 1000;
/** Retry delays double from 5 s and are capped at 5 minutes: a sign-in link lives 15. */
const FIRST_RETRY_MS = 5 * 1000;
export const MAX_RETRY_MS = 5 * 60 * 1000;
/** A delivery without an expiry that keeps failing transiently is given up after a day. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
/** How long a finished (sent or failed) delivery stays listed. */
const KEEP_FINISHED_MS = 7 * 24 * 60 * 60 * 1000;

/** Delay before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelay(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(attempts - 1, 0), MAX_RETRY_MS);
}

export const DELIVERIES = ["outbox", "delivery"] as const;
export const deliveryKey = (id: string): Key => [...DELIVERIES, id];
export type QueuePlace = NonNullable<Delivery["queue"]>;
/** A queue's next sequence number. */
export const counterKey = (queue: string): Key => ["outbox", "sequence", queue];
/** A queue's unfinished deliveries by sequence number: the first is the one that may go. */
export const queuePrefix = (queue: string): Key => ["outbox", "queue", queue];
export const queueKey = (queue: QueuePlace): Key => [
  ...queuePrefix(queue.name),
  queue.sequence,
];
export const duePrefix = (lane: Lane): Key => ["outbox", "due", lane];
const _laneOf = (delivery: Delivery): Lane => delivery.queue ? "queue" : "direct";
export const dueKey = (delivery: Delivery & { due: number }): Key => [
  ...duePrefix(_laneOf(delivery)),
  delivery.due,
  delivery.id,
];
/** When a delivery may be tried next by its own state (its queue's order aside). */
export function dueAt(delivery: Delivery): number {
  if (delivery.state === "sending") return delivery.claim?.until ?? delivery.nextAttemptAt;
  // An expiring one is looked at when its link dies, to be reported rather than kept.
  return Math.min(delivery.nextAttemptAt, delivery.expiresAt ?? Infinity);
}

/** Whether a delivery may be claimed at `at`: its time has come, its link died, or a claim lapsed. */
export function isDue(delivery: Delivery, at: number): boolean {
  if (delivery.state === "pending") {
    return delivery.nextAttemptAt <= at ||
      (delivery.expiresAt !== null && delivery.expiresAt <= at);
  }
  return delivery.state === "sending" && delivery.claim !== null && delivery.claim.until <= at;
}

export interface RecordOptions {
  readonly kind: string;
  readonly payload: unknown;
  readonly label: string;
  readonly expiresAt?: number | null;
  readonly reportTo?: Key | null;
}

/**
 * The store expiry of a delivery: a retention once finished; none while unsent, since one
 * whose link dies is reported as failed then, not made to vanish.
 */
export function putDelivery(delivery: Delivery): Mutation {
  const finished = delivery.state === "sent" || delivery.state === "failed";
  return finished
    ? { type: "set", key: deliveryKey(delivery.id), value: delivery, expireIn: KEEP_FINISHED_MS }
    : { type: "set", key: deliveryKey(delivery.id), value: delivery };
}

/** The due index following a delivery from `before` to `next`. */
export function indexMoves(before: Delivery | null, next: Delivery): Mutation[] {
  if (before !== null && before.due === next.due && before.state === next.state) return [];
  const moves: Mutation[] = [];
  if (before?.due !== undefined) {
    moves.push({ type: "delete", key: dueKey({ ...before, due: before.due }) });
  }
  if (next.due !== undefined) {
    const mark: DueMark = { state: next.state, ...(next.queue ? { queue: next.queue } : {}) };
    moves.push({ type: "set", key: dueKey({ ...next, due: next.due }), value: mark });
  }
  return moves;
}

/** Whether a delivery may still go: pending or sending. */
export const isUnfinished = (d: Delivery): boolean =>
  d.state === "pending" || d.state === "sending";

/**
 * A new delivery made at `createdAt`: without a queue, claimed by its maker; in `queue`, due now
 * when it is the queue's `head`, else waiting for its turn.
 */
export function newDelivery(
  options: RecordOptions,
  queue: QueuePlace | null,
  head: boolean,
  createdAt: number,
): Delivery {
  // Creation time first, so the store lists deliveries oldest first.
  const id = `${createdAt.toString(36).padStart(10, "0")}-${crypto.randomUUID()}`;
  const claim = queue === null ? { token: crypto.randomUUID(), until: createdAt + LEASE_MS } : null;
  return {
    id,
    kind: options.kind,
    payload: options.payload,
    label: options.label,
    state: queue === null ? "sending" : "pending",
    attempts: queue === null ? 1 : 0,
    createdAt,
    nextAttemptAt: createdAt,
    claim,
    expiresAt: options.expiresAt ?? null,
    lastError: null,
    reportTo: options.reportTo ?? null,
    ...(queue === null ? {} : { queue }),
    // Recorded claimed, it is due when that claim lapses; queued, when its turn comes.
    ...(claim !== null ? { due: claim.until } : head ? { due: createdAt } : {}),
  };
}

/** Oldest first; within one millisecond, each queue's deliveries by their place in it. */
export function byCreation(a: Delivery, b: Delivery): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  const [queueA, queueB] = [a.queue?.name ?? "", b.queue?.name ?? ""];
  if (queueA !== queueB) return queueA < queueB ? -1 : 1;
  return (a.queue?.sequence ?? 0) - (b.queue?.sequence ?? 0) || (a.id < b.id ? -1 : 1);
}
