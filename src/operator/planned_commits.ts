// An operator update as a plan of checks and writes against what it read, committed only while
// that still holds, and planned again when a concurrent writer (an agent, another report) got
// there first.
import type { AtomicCheck, Key, Mutation, Store } from "../store/store.ts";
import type { Outcome, Refusal } from "./operator_bodies.ts";

/** A plan: the writes of the update; nothing to write; or a commit on the way (`step`). */
export type Planned<T> =
  | { value: T; checks: AtomicCheck[]; mutations: Mutation[] }
  | { unchanged: T }
  | { step: { checks: AtomicCheck[]; mutations: Mutation[] } };

/** Concurrent writers make a commit fail; it is planned again, so many times at most. */
const COMMIT_ATTEMPTS = 5;

/** One record replaced by `next` while it stands as read, with the change's audit entry. */
export function replaced<T>(
  entry: { readonly key: Key; readonly version: string },
  next: T,
  audit: Mutation,
): Outcome<Planned<T>> {
  return {
    ok: true,
    value: {
      value: next,
      checks: [{ key: entry.key, version: entry.version }],
      mutations: [{ type: "set", key: entry.key, value: next }, audit],
    },
  };
}

export function notFound(message: string): Refusal {
  return { ok: false, status: 404, error: "not_found", message };
}

/**
 * Plans against what it reads and commits only while that still holds. A step is a commit on
 * the way: once it is made, planning goes on from what it left.
 */
export async function commitPlanned<T>(
  store: Store,
  plan: () => Promise<Outcome<Planned<T>>>,
): Promise<Outcome<T>> {
  for (let attempt = 1;;) {
    const planned = await plan();
    if (!planned.ok) return planned;
    if ("unchanged" in planned.value) return { ok: true, value: planned.value.unchanged };
    if ("step" in planned.value) {
      const { checks, mutations } = planned.value.step;
      if (await store.commit(checks, mutations)) continue;
    } else {
      const { value, checks, mutations } = planned.value;
      if (await store.commit(checks, mutations)) return { ok: true, value };
    }
    if (attempt++ === COMMIT_ATTEMPTS) {
      return {
        ok: false,
        status: 409,
        error: "conflict",
        message: "the record kept changing while this update was applied; send it again",
      };
    }
  }
}
