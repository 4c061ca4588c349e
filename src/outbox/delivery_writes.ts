/**
 * Changes of a delivery's state as one checked commit (outbox.ts): planned against what the
 * store holds now, with its queue's index, the next head's turn and the record reporting it.
 */
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import type { AtomicCheck, Entry, Mutation, Store } from "../store/store.ts";
import {
  counterKey,
  type Delivery,
  deliveryKey,
  dueAt,
  indexMoves,
  isUnfinished,
  putDelivery,
  queueKey,
  queuePrefix,
} from "./delivery.ts";

/** How many times a state change is planned again when only what it read beside changed. */
const REPLAN_TRIES = 5;

export interface DeliveryWrites {
  read(id: string): Promise<Entry<Delivery> | null>;
  /** The first index entries of a queue (the head first). */
  headOf(queue: string, limit?: number): Promise<Entry<string>[]>;
  /**
   * Writes `wanted` if `entry` is unchanged; returns what was written, or null. When only what
   * it read beside changed (its queue moved, a report record), it plans again.
   */
  replace(entry: Entry<Delivery>, wanted: Delivery): Promise<Delivery | null>;
}

export function createDeliveryWrites(deps: { store: Store; now: () => number }): DeliveryWrites {
  const { store, now } = deps;

  const headOf = async (queue: string, limit = 1): Promise<Entry<string>[]> => {
    const heads: Entry<string>[] = [];
    for await (const entry of store.list<string>(queuePrefix(queue), { limit })) {
      heads.push(entry);
    }
    return heads;
  };

  const read = (id: string) => store.get<Delivery>(deliveryKey(id));

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
    if (isUnfinished(wanted) && wanted.queue) {
      const [head] = await headOf(wanted.queue.name);
      if (head) checks.push({ key: head.key, version: head.version });
      const first = head === undefined || (head.key.at(-1) as number) >= wanted.queue.sequence;
      if (first) next = { ...unindexed, due: dueAt(wanted) };
    } else if (isUnfinished(wanted)) {
      next = { ...unindexed, due: dueAt(wanted) };
    }
    const mutations: Mutation[] = [putDelivery(next), ...indexMoves(before, next)];
    if (next.queue && isUnfinished(next) !== isUnfinished(before)) {
      const key = queueKey(next.queue);
      mutations.push(
        isUnfinished(next) ? { type: "set", key, value: next.id } : { type: "delete", key },
      );
    }
    if (next.queue && isUnfinished(before) && !isUnfinished(next)) {
      // The next head takes its turn now, behind the heads of other queues already waiting.
      const successor = (await headOf(next.queue.name, 2)).find((e) => e.value !== next.id);
      const waiting = successor && await read(successor.value);
      if (waiting && waiting.value.due === undefined) {
        const indexed = { ...waiting.value, due: Math.max(dueAt(waiting.value), now()) };
        checks.push({ key: waiting.key, version: waiting.version });
        mutations.push(putDelivery(indexed), ...indexMoves(waiting.value, indexed));
      } else if (!successor) {
        // None yet: a recording meanwhile (it moves the counter) makes this commit fail.
        const counter = await store.get(counterKey(next.queue.name));
        checks.push({ key: counterKey(next.queue.name), version: counter?.version ?? null });
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

  const replace = (entry: Entry<Delivery>, wanted: Delivery): Promise<Delivery | null> =>
    retryCommit(async () => {
      const { next, checks, mutations } = await plan(entry, wanted);
      if (await store.commit(checks, mutations)) return next;
      const again = await read(entry.value.id);
      return again?.version !== entry.version ? null : RETRY;
    }, { attempts: REPLAN_TRIES, exhausted: () => null });

  return { read, headOf, replace };
}
