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
 *
 * What may go is found without reading what is finished or waits behind its queue's head: an
 * index of due times holds each unfinished delivery without a queue and the head of each queue,
 * in two lanes (so mail never waits behind events), kept in the same commits as the states it
 * follows. A head that takes its place later is indexed at that moment, behind the heads of
 * other queues that waited before it: the queues take turns.
 */
import { RETRY, retryCommit } from "../store/commit_retry.ts";
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
interface DueMark {
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
const _duePrefix = (lane: Lane): Key => ["outbox", "due", lane];
const _laneOf = (delivery: Delivery): Lane => delivery.queue ? "queue" : "direct";
const _dueKey = (delivery: Delivery & { due: number }): Key => [
  ..._duePrefix(_laneOf(delivery)),
  delivery.due,
  delivery.id,
];
/** How many times a state change is planned again when only what it read beside changed. */
const REPLAN_TRIES = 5;

/** When a delivery may be tried next by its own state (its queue's order aside). */
function _dueAt(delivery: Delivery): number {
  if (delivery.state === "sending") return delivery.claim?.until ?? delivery.nextAttemptAt;
  // An expiring one is looked at when its link dies, to be reported rather than kept.
  return Math.min(delivery.nextAttemptAt, delivery.expiresAt ?? Infinity);
}

/** Whether a delivery may be claimed at `at`: its time has come, its link died, or a claim lapsed. */
function _isDue(delivery: Delivery, at: number): boolean {
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
   * The mutations recording a delivery, for the caller's own commit. It is recorded claimed
   * by the caller, who tries it at once (no commit spent on claiming it); should the caller
   * die first, any sender takes it over when that claim lapses.
   */
  record(options: RecordOptions): { readonly delivery: Delivery; readonly mutations: Mutation[] };
  /**
   * The checks and mutations recording deliveries at the end of `queue`, in this order, for
   * the caller's commit (retried from a fresh read if it fails). They are recorded due now and
   * unclaimed: the sender takes each when its turn comes.
   */
  recordInQueue(queue: string, options: readonly RecordOptions[]): Promise<QueuedRecording>;
  get(id: string): Promise<Delivery | null>;
  /**
   * Deliveries oldest first, a queue's in its order (ids alone do not tell apart two made in
   * one millisecond), optionally only those in the given states. Reads every delivery kept: for
   * the operator, never for the sender.
   */
  list(states?: readonly DeliveryState[]): Promise<Delivery[]>;
  /** At most `limit` entries of a lane's due index whose time has come, earliest first. */
  due(lane: Lane, limit: number): Promise<DueItem[]>;
  /**
   * Claims a delivery that is due (pending and its time has come or its link died, or sending
   * with a lapsed claim). Returns it claimed, or null when it is not due, not yet its turn in its
   * queue, or another claimer won. Given the due entry that named it, clears that entry when
   * the delivery is gone.
   */
  claim(id: string, listed?: DueItem): Promise<Delivery | null>;
  /** Records an attempt's outcome, if the claim is still ours; returns the new state or null. */
  finish(claimed: Delivery, outcome: AttemptOutcome): Promise<Delivery | null>;
  /**
   * Makes a pending or failed delivery due now (the admin's retry). A failed one of a queue
   * takes its old place again: it goes before anything of its queue not yet sent.
   */
  retryNow(id: string): Promise<Delivery | null>;
  /** The earliest moment something (in one lane) may become due, or null when nothing waits. */
  nextDueAt(lane?: Lane): Promise<number | null>;
  /** Writes a delivery again as it is, placing it in the due index (indexUnfinished). */
  reindex(entry: Entry<Delivery>): Promise<boolean>;
}

/**
 * How many deliveries are unfinished, from the due index alone: each delivery without a queue
 * is there, and each queue's head, whose queue holds every later sequence up to its counter
 * (a queue's deliveries finish in order; one the admin retried counts its queue from its own
 * place until it finishes).
 */
export async function countUnfinished(
  store: Store,
): Promise<{ readonly pending: number; readonly sending: number }> {
  let pending = 0;
  let sending = 0;
  for (const lane of ["direct", "queue"] as const) {
    for await (const { value } of store.list<DueMark>(_duePrefix(lane))) {
      if (value.state === "sending") sending++;
      else pending++;
      if (value.queue) {
        const counter = await store.get<number>(_counterKey(value.queue.name));
        pending += Math.max((counter?.value ?? 0) - value.queue.sequence - 1, 0);
      }
    }
  }
  return { pending, sending };
}

/** Every key a queue holds, its deliveries (finished ones too) included: its erasure. */
export async function queueKeysOf(store: Store, queue: string): Promise<Key[]> {
  const keys: Key[] = [];
  if (await store.get(_counterKey(queue))) keys.push(_counterKey(queue));
  for await (const entry of store.list(_queuePrefix(queue))) keys.push(entry.key);
  for await (const entry of store.list<Delivery>(PREFIX)) {
    const delivery = entry.value;
    if (delivery.queue?.name !== queue) continue;
    keys.push(entry.key);
    if (delivery.due !== undefined) keys.push(_dueKey({ ...delivery, due: delivery.due }));
  }
  return keys;
}

/**
 * Gives every unfinished delivery its place in the due index, for stores written before the
 * index existed (schema version 5): those without a queue, and the head of each queue. Each is
 * written only if it is still the delivery read, so it may run beside a sender; run twice, it
 * changes nothing the second time.
 */
export async function indexUnfinished(store: Store, now: () => number): Promise<void> {
  const outbox = createOutbox({ store, now });
  const unfinished: Entry<Delivery>[] = [];
  for await (const entry of store.list<Delivery>(PREFIX)) {
    const { state, due } = entry.value;
    if ((state === "pending" || state === "sending") && due === undefined) unfinished.push(entry);
  }
  for (const entry of unfinished) await outbox.reindex(entry);
}

export function createOutbox(deps: { store: Store; now: () => number }): Outbox {
  const { store, now } = deps;

  /**
   * The store expiry of a delivery: a retention once finished; none while unsent, since one
   * whose link dies is reported as failed then, not made to vanish.
   */
  const put = (delivery: Delivery): Mutation => {
    const finished = delivery.state === "sent" || delivery.state === "failed";
    return finished
      ? { type: "set", key: _key(delivery.id), value: delivery, expireIn: KEEP_FINISHED_MS }
      : { type: "set", key: _key(delivery.id), value: delivery };
  };

  /** The due index following a delivery from `before` to `next`. */
  const indexMoves = (before: Delivery | null, next: Delivery): Mutation[] => {
    if (before !== null && before.due === next.due && before.state === next.state) return [];
    const moves: Mutation[] = [];
    if (before?.due !== undefined) {
      moves.push({ type: "delete", key: _dueKey({ ...before, due: before.due }) });
    }
    if (next.due !== undefined) {
      const mark: DueMark = { state: next.state, ...(next.queue ? { queue: next.queue } : {}) };
      moves.push({ type: "set", key: _dueKey({ ...next, due: next.due }), value: mark });
    }
    return moves;
  };

  const unfinished = (d: Delivery) => d.state === "pending" || d.state === "sending";

  /** The first index entries of a queue (the head first). */
  const headOf = async (queue: string, limit = 1): Promise<Entry<string>[]> => {
    const heads: Entry<string>[] = [];
    for await (const entry of store.list<string>(_queuePrefix(queue), { limit })) {
      heads.push(entry);
    }
    return heads;
  };

  const read = (id: string) => store.get<Delivery>(_key(id));

  /**
   * Plans `wanted` against what the store holds now: its due time (a queued one is indexed only
   * as its queue's head), its queue's index entry there exactly while it is unfinished, the
   * report record following its state, and, when it leaves its queue, the next head indexed.
   * What it read beside the delivery is checked too.
   */
  const plan = async (entry: Entry<Delivery>, wanted: Delivery) => {
    const before = entry.value;
    const checks: AtomicCheck[] = [{ key: entry.key, version: entry.version }];
    const { due: _, ...unindexed } = wanted;
    let next: Delivery = unindexed;
    if (unfinished(wanted) && wanted.queue) {
      const [head] = await headOf(wanted.queue.name);
      if (head) checks.push({ key: head.key, version: head.version });
      const first = head === undefined || (head.key.at(-1) as number) >= wanted.queue.sequence;
      if (first) next = { ...unindexed, due: _dueAt(wanted) };
    } else if (unfinished(wanted)) {
      next = { ...unindexed, due: _dueAt(wanted) };
    }
    const mutations: Mutation[] = [put(next), ...indexMoves(before, next)];
    if (next.queue && unfinished(next) !== unfinished(before)) {
      const key = _queueKey(next.queue);
      mutations.push(
        unfinished(next) ? { type: "set", key, value: next.id } : { type: "delete", key },
      );
    }
    if (next.queue && unfinished(before) && !unfinished(next)) {
      // The next head takes its turn now, behind the heads of other queues already waiting.
      const successor = (await headOf(next.queue.name, 2)).find((e) => e.value !== next.id);
      const waiting = successor && await read(successor.value);
      if (waiting && waiting.value.due === undefined) {
        const indexed = { ...waiting.value, due: Math.max(_dueAt(waiting.value), now()) };
        checks.push({ key: waiting.key, version: waiting.version });
        mutations.push(put(indexed), ...indexMoves(waiting.value, indexed));
      } else if (!successor) {
        // None yet: a recording meanwhile (it moves the counter) makes this commit fail.
        const counter = await store.get(_counterKey(next.queue.name));
        checks.push({ key: _counterKey(next.queue.name), version: counter?.version ?? null });
      }
    }
    if (next.reportTo !== null && next.state !== before.state) {
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
    return { next, checks, mutations };
  };

  /**
   * Writes `wanted` if `entry` is unchanged; returns what was written, or null. When only what
   * it read beside changed (its queue moved, a report record), it plans again.
   */
  const replace = (entry: Entry<Delivery>, wanted: Delivery): Promise<Delivery | null> =>
    retryCommit(async () => {
      const { next, checks, mutations } = await plan(entry, wanted);
      if (await store.commit(checks, mutations)) return next;
      const again = await read(entry.value.id);
      return again?.version !== entry.version ? null : RETRY;
    }, { attempts: REPLAN_TRIES, exhausted: () => null });

  const create = (options: RecordOptions, queue: QueuePlace | null, head: boolean): Delivery => {
    const createdAt = now();
    // Creation time first, so the store lists deliveries oldest first.
    const id = `${createdAt.toString(36).padStart(10, "0")}-${crypto.randomUUID()}`;
    const claim = queue === null
      ? { token: crypto.randomUUID(), until: createdAt + LEASE_MS }
      : null;
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
  };

  /** Whether `delivery` is first among the unfinished of its queue (or has no queue). */
  const isTurnOf = async (delivery: Delivery): Promise<boolean> => {
    if (!delivery.queue) return true;
    const [head] = await headOf(delivery.queue.name);
    return head?.value === delivery.id;
  };

  return {
    record(options) {
      const delivery = create(options, null, true);
      return { delivery, mutations: [put(delivery), ...indexMoves(null, delivery)] };
    },

    async recordInQueue(queue, options) {
      const counter = await store.get<number>(_counterKey(queue));
      const [head] = await headOf(queue);
      const first = counter?.value ?? 0;
      const deliveries = options.map((o, i) =>
        create(o, { name: queue, sequence: first + i }, i === 0 && head === undefined)
      );
      return {
        deliveries,
        // The head as read: should it finish meanwhile, this commit fails and is made again, so
        // the first recorded is never left out of the index behind a queue that emptied.
        checks: [
          { key: _counterKey(queue), version: counter?.version ?? null },
          ...(head ? [{ key: head.key, version: head.version }] : []),
        ],
        mutations: [
          { type: "set", key: _counterKey(queue), value: first + deliveries.length },
          ...deliveries.flatMap((d, i): Mutation[] => [
            put(d),
            ...indexMoves(null, d),
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

    async due(lane, limit) {
      const at = now();
      const items: DueItem[] = [];
      for await (const entry of store.list(_duePrefix(lane), { limit })) {
        if ((entry.key[3] as number) > at) break;
        items.push({ id: entry.key[4] as string, key: entry.key });
      }
      return items;
    },

    async claim(id, listed) {
      const entry = await read(id);
      if (!entry) {
        // Gone (erased, or expired by a release that let the store expire it): never due again.
        if (listed) await store.delete(listed.key);
        return null;
      }
      const delivery = entry.value;
      const at = now();
      if (!_isDue(delivery, at)) return null;
      if (!(await isTurnOf(delivery))) {
        // Indexed as a head it no longer is (the admin retried an earlier one): out of the
        // index until its turn comes again.
        if (delivery.due !== undefined) await replace(entry, delivery);
        return null;
      }
      return await replace(entry, {
        ...delivery,
        state: "sending",
        attempts: delivery.attempts + 1,
        claim: { token: crypto.randomUUID(), until: at + LEASE_MS },
      });
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
      return await replace(entry, next);
    },

    async retryNow(id) {
      const entry = await read(id);
      if (!entry || (entry.value.state !== "pending" && entry.value.state !== "failed")) {
        return null;
      }
      return await replace(entry, { ...entry.value, state: "pending", nextAttemptAt: now() });
    },

    async nextDueAt(lane) {
      let earliest: number | null = null;
      for (const one of lane === undefined ? (["direct", "queue"] as const) : [lane]) {
        for await (const entry of store.list(_duePrefix(one), { limit: 1 })) {
          const at = entry.key[3] as number;
          if (earliest === null || at < earliest) earliest = at;
        }
      }
      return earliest;
    },

    async reindex(entry) {
      return (await replace(entry, entry.value)) !== null;
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
