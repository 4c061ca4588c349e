/**
 * The durable outbox: a queue of deliveries (mail today, signed events later) kept in the
 * store. A delivery is recorded in the same commit as whatever it announces (a sign-in link,
 * an invitation), so neither exists without the other, and a sender delivers it later.
 *
 * Claims are safe between processes: a sender claims a delivery with a versioned commit
 * (only one of several racing senders wins) and holds it for a lease; a sender that dies
 * mid-delivery loses its claim when the lease runs out, and another sends again. So a crash
 * between sending and marking sent sends at most once more: at-least-once, because a lost
 * sign-in mail locks a person out while a second copy of it is harmless.
 *
 * Deliveries in a queue (a business's events) go out one after another in the order of the
 * commits that recorded them: each recording commit takes the queue's next sequence number,
 * checked like any record it read, and holds an index entry under it until the delivery is
 * sent or given up; only the delivery at the head of that index may be claimed, by any
 * process. So a later event is never delivered before an earlier one succeeded or failed.
 */
import type { AtomicCheck, Entry, Key, Mutation, Store } from "../store/store.ts";

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
  /** Past this moment the delivery is dropped, not sent (the link it carries has expired). */
  readonly expiresAt: number | null;
  readonly lastError: string | null;
  /** A record whose `delivery` field follows this delivery's state (an invitation). */
  readonly reportTo: Key | null;
  /** The ordered queue it belongs to and its place there; absent: sent in any order. */
  readonly queue?: { readonly name: string; readonly sequence: number };
}

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

const PREFIX = ["outbox", "delivery"] as const;
const _key = (id: string): Key => [...PREFIX, id];
type QueuePlace = NonNullable<Delivery["queue"]>;
/** A queue's next sequence number. */
const _counterKey = (queue: string): Key => ["outbox", "sequence", queue];
/** A queue's unfinished deliveries by sequence number: the first is the one that may go. */
const _queuePrefix = (queue: string): Key => ["outbox", "queue", queue];
const _queueKey = (queue: QueuePlace): Key => [
  ..._queuePrefix(queue.name),
  queue.sequence,
];

export interface RecordOptions {
  readonly kind: string;
  readonly payload: unknown;
  readonly label: string;
  readonly expiresAt?: number | null;
  readonly reportTo?: Key | null;
}

/** How one attempt ended, as the sender tells the outbox. */
export type AttemptOutcome =
  | { readonly kind: "sent" }
  | { readonly kind: "retry"; readonly error: string }
  | { readonly kind: "failed"; readonly error: string };

/** What an ordered recording adds to the caller's commit. */
export interface QueuedRecording {
  readonly deliveries: readonly Delivery[];
  /** The queue's counter as read: the commit fails if another recording took it meanwhile. */
  readonly checks: readonly AtomicCheck[];
  readonly mutations: readonly Mutation[];
}

export interface Outbox {
  /**
   * The mutation recording a delivery, for the caller's own commit. It is recorded claimed
   * by the caller, who tries it at once (no commit spent on claiming it); should the caller
   * die first, any sender takes it over when that claim lapses.
   */
  record(options: RecordOptions): { readonly delivery: Delivery; readonly mutation: Mutation };
  /**
   * The checks and mutations recording deliveries at the end of `queue`, in this order, for
   * the caller's commit (retried from a fresh read if it fails). They are recorded due now and
   * unclaimed: the sender takes each when its turn comes.
   */
  recordInQueue(queue: string, options: readonly RecordOptions[]): Promise<QueuedRecording>;
  get(id: string): Promise<Delivery | null>;
  /**
   * Deliveries oldest first, a queue's in its order (ids alone do not tell apart two made in
   * one millisecond), optionally only those in the given states.
   */
  list(states?: readonly DeliveryState[]): Promise<Delivery[]>;
  /**
   * Claims a delivery that is due (pending and its time has come, or sending with a lapsed
   * claim). Returns it claimed, or null when it is not due, not yet its turn in its queue, or
   * another claimer won. One past its expiry reads as absent (the store expires it with its
   * link): dropped, never sent.
   */
  claim(id: string): Promise<Delivery | null>;
  /** Records an attempt's outcome, if the claim is still ours; returns the new state or null. */
  finish(claimed: Delivery, outcome: AttemptOutcome): Promise<Delivery | null>;
  /**
   * Makes a pending or failed delivery due now (the admin's retry). A failed one of a queue
   * takes its old place again: it goes before anything of its queue not yet sent.
   */
  retryNow(id: string): Promise<Delivery | null>;
  /** The earliest moment something in the outbox may become due, or null when nothing waits. */
  nextDueAt(): Promise<number | null>;
}

/**
 * The unfinished deliveries that may go now as far as order goes: each without a queue, and
 * the lowest sequence of each queue (the rest wait for it, whatever their own time).
 */
export function firstInQueues(unfinished: readonly Delivery[]): Delivery[] {
  const first = new Map<string, number>();
  for (const { queue } of unfinished) {
    if (queue && queue.sequence < (first.get(queue.name) ?? Infinity)) {
      first.set(queue.name, queue.sequence);
    }
  }
  return unfinished.filter((d) => !d.queue || first.get(d.queue.name) === d.queue.sequence);
}

/** Every key a queue holds, its deliveries (finished ones too) included: its erasure. */
export async function queueKeysOf(store: Store, queue: string): Promise<Key[]> {
  const keys: Key[] = [];
  if (await store.get(_counterKey(queue))) keys.push(_counterKey(queue));
  for await (const entry of store.list(_queuePrefix(queue))) keys.push(entry.key);
  for await (const entry of store.list<Delivery>(PREFIX)) {
    if (entry.value.queue?.name === queue) keys.push(entry.key);
  }
  return keys;
}

export function createOutbox(deps: { store: Store; now: () => number }): Outbox {
  const { store, now } = deps;

  /** The store expiry of a delivery: its own expiry while unsent, a retention once finished. */
  const expireIn = (delivery: Delivery): number | undefined => {
    if (delivery.state === "sent" || delivery.state === "failed") {
      return KEEP_FINISHED_MS;
    }
    return delivery.expiresAt === null ? undefined : Math.max(delivery.expiresAt - now(), 1);
  };

  const put = (delivery: Delivery): Mutation => {
    const ttl = expireIn(delivery);
    return ttl === undefined
      ? { type: "set", key: _key(delivery.id), value: delivery }
      : { type: "set", key: _key(delivery.id), value: delivery, expireIn: ttl };
  };

  const unfinished = (d: Delivery) => d.state === "pending" || d.state === "sending";

  /**
   * Writes `next` if `entry` is unchanged, with the report record following its state and
   * its queue's index entry there exactly while it is unfinished.
   */
  const replace = async (entry: Entry<Delivery>, next: Delivery): Promise<boolean> => {
    const checks = [{ key: entry.key, version: entry.version }];
    const mutations: Mutation[] = [put(next)];
    if (next.queue && unfinished(next) !== unfinished(entry.value)) {
      const key = _queueKey(next.queue);
      mutations.push(
        unfinished(next) ? { type: "set", key, value: next.id } : { type: "delete", key },
      );
    }
    if (next.reportTo !== null && next.state !== entry.value.state) {
      const report = await store.get<Record<string, unknown>>(next.reportTo);
      if (report) {
        checks.push({ key: report.key, version: report.version });
        mutations.push({
          type: "set",
          key: report.key,
          value: { ...report.value, delivery: next.state === "sending" ? "pending" : next.state },
        });
      }
    }
    return await store.commit(checks, mutations);
  };

  const read = (id: string) => store.get<Delivery>(_key(id));

  const create = (options: RecordOptions, queue: QueuePlace | null): Delivery => {
    const createdAt = now();
    // Creation time first, so the store lists deliveries oldest first.
    const id = `${createdAt.toString(36).padStart(10, "0")}-${crypto.randomUUID()}`;
    return {
      id,
      kind: options.kind,
      payload: options.payload,
      label: options.label,
      state: queue === null ? "sending" : "pending",
      attempts: queue === null ? 1 : 0,
      createdAt,
      nextAttemptAt: createdAt,
      claim: queue === null ? { token: crypto.randomUUID(), until: createdAt + LEASE_MS } : null,
      expiresAt: options.expiresAt ?? null,
      lastError: null,
      reportTo: options.reportTo ?? null,
      ...(queue === null ? {} : { queue }),
    };
  };

  /** Whether `delivery` is first among the unfinished of its queue (or has no queue). */
  const isTurnOf = async (delivery: Delivery): Promise<boolean> => {
    if (!delivery.queue) return true;
    for await (const head of store.list<string>(_queuePrefix(delivery.queue.name), { limit: 1 })) {
      return head.value === delivery.id;
    }
    return false;
  };

  return {
    record(options) {
      const delivery = create(options, null);
      return { delivery, mutation: put(delivery) };
    },

    async recordInQueue(queue, options) {
      const counter = await store.get<number>(_counterKey(queue));
      const first = counter?.value ?? 0;
      const deliveries = options.map((o, i) => create(o, { name: queue, sequence: first + i }));
      return {
        deliveries,
        checks: [{ key: _counterKey(queue), version: counter?.version ?? null }],
        mutations: [
          { type: "set", key: _counterKey(queue), value: first + deliveries.length },
          ...deliveries.flatMap((d, i): Mutation[] => [
            put(d),
            { type: "set", key: _queueKey({ name: queue, sequence: first + i }), value: d.id },
          ]),
        ],
      };
    },

    async get(id) {
      return (await read(id))?.value ?? null;
    },

    async list(states) {
      const deliveries: Delivery[] = [];
      for await (const entry of store.list<Delivery>(PREFIX)) {
        if (!states || states.includes(entry.value.state)) deliveries.push(entry.value);
      }
      return deliveries.sort(_byCreation);
    },

    async claim(id) {
      const entry = await read(id);
      if (!entry) return null;
      const delivery = entry.value;
      const at = now();
      const due = (delivery.state === "pending" && delivery.nextAttemptAt <= at) ||
        (delivery.state === "sending" && delivery.claim !== null && delivery.claim.until <= at);
      if (!due || !(await isTurnOf(delivery))) return null;
      const claimed: Delivery = {
        ...delivery,
        state: "sending",
        attempts: delivery.attempts + 1,
        claim: { token: crypto.randomUUID(), until: at + LEASE_MS },
      };
      return (await replace(entry, claimed)) ? claimed : null;
    },

    async finish(claimed, outcome) {
      const entry = await read(claimed.id);
      // Our claim lapsed and another sender took the delivery over: it decides now.
      if (!entry || entry.value.claim?.token !== claimed.claim?.token) return null;
      const at = now();
      const base = { ...entry.value, claim: null };
      let next: Delivery;
      if (outcome.kind === "sent") {
        next = { ...base, state: "sent", payload: null, lastError: null };
      } else if (
        outcome.kind === "failed" ||
        (base.expiresAt === null && at - base.createdAt >= GIVE_UP_AFTER_MS)
      ) {
        next = { ...base, state: "failed", lastError: outcome.error };
      } else {
        next = {
          ...base,
          state: "pending",
          nextAttemptAt: at + retryDelay(base.attempts),
          lastError: outcome.error,
        };
      }
      return (await replace(entry, next)) ? next : null;
    },

    async retryNow(id) {
      const entry = await read(id);
      if (!entry || (entry.value.state !== "pending" && entry.value.state !== "failed")) {
        return null;
      }
      const next: Delivery = { ...entry.value, state: "pending", nextAttemptAt: now() };
      return (await replace(entry, next)) ? next : null;
    },

    async nextDueAt() {
      let earliest: number | null = null;
      const waiting: Delivery[] = [];
      for await (const { value } of store.list<Delivery>(PREFIX)) {
        if (unfinished(value)) waiting.push(value);
      }
      for (const value of firstInQueues(waiting)) {
        const at = value.state === "pending"
          ? value.nextAttemptAt
          : value.state === "sending"
          ? value.claim?.until ?? null
          : null;
        if (at !== null && (earliest === null || at < earliest)) earliest = at;
      }
      return earliest;
    },
  };
}

/** Oldest first; within one millisecond, each queue's deliveries by their place in it. */
function _byCreation(a: Delivery, b: Delivery): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  const [queueA, queueB] = [a.queue?.name ?? "", b.queue?.name ?? ""];
  if (queueA !== queueB) return queueA < queueB ? -1 : 1;
  return (a.queue?.sequence ?? 0) - (b.queue?.sequence ?? 0) || (a.id < b.id ? -1 : 1);
}
