/**
 * A Store that reports how long each operation took and whether it failed, for the operator's
 * metrics. main.ts wraps the store in it only when the operator listener is on, so without
 * metrics the store is called directly and measuring costs nothing.
 */
import type { Key, ListOptions, Store } from "../store/store.ts";

export const STORE_OPERATIONS = ["get", "set", "delete", "commit", "list", "snapshot"] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/**
 * Told once per operation. A commit whose checks fail is not a failure (it returns false);
 * a failure is a thrown error (the store did not answer, or stayed busy).
 */
export type StoreObserver = (operation: StoreOperation, seconds: number, failed: boolean) => void;

export function withStoreMetrics(store: Store, observe: StoreObserver): Store {
  const timed = async <R>(operation: StoreOperation, run: () => Promise<R>): Promise<R> => {
    const started = performance.now();
    let failed = true;
    try {
      const result = await run();
      failed = false;
      return result;
    } finally {
      observe(operation, (performance.now() - started) / 1000, failed);
    }
  };
  return {
    get: <T>(key: Key) => timed("get", () => store.get<T>(key)),
    set: (key, value, options) => timed("set", () => store.set(key, value, options)),
    delete: (key) => timed("delete", () => store.delete(key)),
    commit: (checks, mutations, options) =>
      timed("commit", () => store.commit(checks, mutations, options)),
    snapshot: (prefix) => timed("snapshot", () => store.snapshot(prefix)),
    list: <T>(prefix: Key, options?: ListOptions) =>
      _timedList(store.list<T>(prefix, options), observe),
    close: () => store.close(),
  };
}

/**
 * One observation per listing: the time spent waiting for the store's entries, not the time
 * the caller spent between them; a caller that stops early ends the store's listing too.
 */
async function* _timedList<T>(
  entries: AsyncIterable<T>,
  observe: StoreObserver,
): AsyncGenerator<T> {
  const iterator = entries[Symbol.asyncIterator]();
  let waited = 0;
  let failed = false;
  let done = false;
  try {
    while (!done) {
      const started = performance.now();
      let step: IteratorResult<T>;
      try {
        step = await iterator.next();
      } catch (error) {
        failed = true;
        throw error;
      } finally {
        waited += performance.now() - started;
      }
      done = step.done === true;
      if (!done) yield step.value;
    }
  } finally {
    if (!done && !failed) await iterator.return?.();
    observe("list", waited / 1000, failed);
  }
}
