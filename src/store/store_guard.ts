/**
 * A deadline on every operation of a store that talks to a server (PostgreSQL), and a short
 * circuit once that server is known not to answer.
 *
 * Deadline: an operation that has not answered within `deadlineMs` throws StoreUnavailableError
 * (answered 503 with Retry-After, as any outage). Its query may still be on its way and land later:
 * every commit is written so that finding it applied afterwards is safe (docs/operating.md,
 * "Store deadlines").
 *
 * Short circuit: the first operation that misses its deadline or meets an outage opens it. While
 * open, no operation reaches the server: one probe read at a time does, under the same deadline,
 * and the operation that started it waits for it; every other one fails at once. A probe that
 * answers closes the circuit. So a frozen database holds at most the operations that were already
 * waiting when it froze, plus one probe per deadline, whatever the traffic.
 */
import {
  type AtomicCheck,
  type CommitOptions,
  type Key,
  type ListOptions,
  type Mutation,
  type SetOptions,
  type Store,
  StoreUnavailableError,
} from "./store.ts";

/** VESTIBULE_DATA_TIMEOUT's default. */
export const DEFAULT_STORE_DEADLINE_MS = 5_000;

/**
 * A snapshot (export, a migration's pass) reads a whole prefix in one query, legitimately longer
 * than a request's read: it is given this many deadlines.
 */
export const SNAPSHOT_DEADLINES = 12;

export interface StoreGuardOptions {
  readonly deadlineMs: number;
  /** A read of the unguarded store that answers only when the server does. */
  readonly probe: () => Promise<unknown>;
}

export function guardStore(store: Store, options: StoreGuardOptions): Store {
  const { deadlineMs } = options;
  let open = false;
  let probing: Promise<void> | null = null;

  const withDeadline = <T>(op: () => Promise<T>, ms = deadlineMs): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`the store did not answer within ${ms / 1000} s`)),
        ms,
      );
    });
    const running = op();
    // Answered after its deadline: nobody waits for it any more.
    running.catch(() => {});
    return Promise.race([running, late]).then(
      (value) => {
        clearTimeout(timer);
        open = false;
        return value;
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (error instanceof StoreUnavailableError) open = true;
        throw error;
      },
    );
  };

  /** Resolves when an operation may go to the server; throws while the circuit stays open. */
  const admit = (): Promise<void> | void => {
    if (!open) return;
    if (probing !== null) {
      return Promise.reject(
        new StoreUnavailableError("the store did not answer, and its probe is still waiting"),
      );
    }
    const current = withDeadline(async () => {
      await options.probe();
    });
    probing = current.finally(() => {
      probing = null;
    });
    return probing;
  };

  const guarded = <T>(op: () => Promise<T>, ms?: number) => async (): Promise<T> => {
    await admit();
    return await withDeadline(op, ms);
  };

  return {
    get: <T>(key: Key) => guarded(() => store.get<T>(key))(),
    set: (key: Key, value: unknown, setOptions?: SetOptions) =>
      guarded(() => store.set(key, value, setOptions))(),
    delete: (key: Key) => guarded(() => store.delete(key))(),
    commit: (
      checks: readonly AtomicCheck[],
      mutations: readonly Mutation[],
      commitOptions?: CommitOptions,
    ) => guarded(() => store.commit(checks, mutations, commitOptions))(),
    async *list<T>(prefix: Key, listOptions?: ListOptions) {
      await admit();
      const iterator = store.list<T>(prefix, listOptions)[Symbol.asyncIterator]();
      let done = false;
      try {
        for (;;) {
          const step = await withDeadline(() => iterator.next());
          if (step.done) {
            done = true;
            return;
          }
          yield step.value;
        }
      } finally {
        // Not awaited: after a missed deadline the iterator is still waiting on its batch.
        if (!done) iterator.return?.().catch(() => {});
      }
    },
    snapshot: (prefix?: Key) =>
      guarded(() => store.snapshot(prefix), deadlineMs * SNAPSHOT_DEADLINES)(),
    close: () => store.close(),
  };
}
