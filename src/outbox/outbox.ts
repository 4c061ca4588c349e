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
import type { AtomicCheck, Entry, Key, Mutation, Store } from "../store/store.ts";
import {
  byCreation,
  counterKey,
  DELIVERIES,
  type Delivery,
  type DeliveryState,
  type DueItem,
  dueKey,
  type DueMark,
  duePrefix,
  GIVE_UP_AFTER_MS,
  indexMoves,
  isDue,
  type Lane,
  LEASE_MS,
  newDelivery,
  putDelivery,
  queueKey,
  type QueuePlace,
  queuePrefix,
  type RecordOptions,
  retryDelay,
} from "./delivery.ts";
import { createDeliveryWrites } from "./delivery_writes.ts";

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
    for await (const { value } of store.list<DueMark>(duePrefix(lane))) {
      if (value.state === "sending") sending++;
      else pending++;
      if (value.queue) {
        const counter = await store.get<number>(counterKey(value.queue.name));
        pending += Math.max((counter?.value ?? 0) - value.queue.sequence - 1, 0);
      }
    }
  }
  return { pending, sending };
}

/** Every key a queue holds, its deliveries (finished ones too) included: its erasure. */
export async function queueKeysOf(store: Store, queue: string): Promise<Key[]> {
  const keys: Key[] = [];
  if (await store.get(counterKey(queue))) keys.push(counterKey(queue));
  for await (const entry of store.list(queuePrefix(queue))) keys.push(entry.key);
  for await (const entry of store.list<Delivery>(DELIVERIES)) {
    const delivery = entry.value;
    if (delivery.queue?.name !== queue) continue;
    keys.push(entry.key);
    if (delivery.due !== undefined) keys.push(dueKey({ ...delivery, due: delivery.due }));
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
  for await (const entry of store.list<Delivery>(DELIVERIES)) {
    const { state, due } = entry.value;
    if ((state === "pending" || state === "sending") && due === undefined) unfinished.push(entry);
  }
  for (const entry of unfinished) await outbox.reindex(entry);
}

export function createOutbox(deps: { store: Store; now: () => number }): Outbox {
  const { store, now } = deps;
  const { read, headOf, replace } = createDeliveryWrites(deps);
  const create = (options: RecordOptions, queue: QueuePlace | null, head: boolean) =>
    newDelivery(options, queue, head, now());

  /** Whether `delivery` is first among the unfinished of its queue (or has no queue). */
  const isTurnOf = async (delivery: Delivery): Promise<boolean> => {
    if (!delivery.queue) return true;
    const [head] = await headOf(delivery.queue.name);
    return head?.value === delivery.id;
  };

  return {
    record(options) {
      const delivery = create(options, null, true);
      return { delivery, mutations: [putDelivery(delivery), ...indexMoves(null, delivery)] };
    },

    async recordInQueue(queue, options) {
      const counter = await store.get<number>(counterKey(queue));
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
          { key: counterKey(queue), version: counter?.version ?? null },
          ...(head ? [{ key: head.key, version: head.version }] : []),
        ],
        mutations: [
          { type: "set", key: counterKey(queue), value: first + deliveries.length },
          ...deliveries.flatMap((d, i): Mutation[] => [
            putDelivery(d),
            ...indexMoves(null, d),
            { type: "set", key: queueKey({ name: queue, sequence: first + i }), value: d.id },
          ]),
        ],
      };
    },

    async get(id) {
      return (await read(id))?.value ?? null;
    },

    async list(states) {
      const deliveries: Delivery[] = [];
      for await (const entry of store.list<Delivery>(DELIVERIES)) {
        if (!states || states.includes(entry.value.state)) deliveries.push(entry.value);
      }
      return deliveries.sort(byCreation);
    },

    async due(lane, limit) {
      const at = now();
      const items: DueItem[] = [];
      for await (const entry of store.list(duePrefix(lane), { limit })) {
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
      if (!isDue(delivery, at)) return null;
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
        for await (const entry of store.list(duePrefix(one), { limit: 1 })) {
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
