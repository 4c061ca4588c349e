// A store that fails or stalls as a test says, for the harness's server in the test's process and
// on Node.js alike (testkit/node_host.ts): a fault is plain data, so it crosses to another process
// where a wrapper function could not.
import type { Key, ListOptions, Store } from "../src/store/store.ts";

export type StoreOperation = "get" | "set" | "delete" | "commit" | "list" | "snapshot";

export interface StoreFault {
  /** The operations it touches; every one when absent. */
  readonly operations?: readonly StoreOperation[];
  /**
   * Only operations on a key (any of a commit's mutations, a listed prefix) whose parts start with
   * these, part by part ("" for any part); every key when absent.
   */
  readonly key?: readonly string[];
  /** How long the operation waits first. */
  readonly delayMs?: number;
  /**
   * The error the operation then fails with (its name and message: a TypeError or RangeError is
   * one, with its stack); it goes on when absent.
   */
  readonly error?: { readonly name: string; readonly message: string };
}

/** `store`, each operation meeting the fault `current()` names at that moment (none: null). */
export function withFaults(store: Store, current: () => StoreFault | null): Store {
  const meets = (operation: StoreOperation, keys: readonly Key[]) => {
    const fault = current();
    if (fault === null || !(fault.operations?.includes(operation) ?? true)) return null;
    const pattern = fault.key;
    if (
      pattern !== undefined &&
      !keys.some((key) =>
        pattern.every((part, i) => i < key.length && `${key[i]}`.startsWith(part))
      )
    ) return null;
    return fault;
  };
  /** Waits and fails as the fault met says, then runs `operation`. */
  const run = async <T>(fault: StoreFault | null, operation: () => Promise<T>): Promise<T> => {
    if (fault?.delayMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    }
    if (fault?.error !== undefined) throw _error(fault.error.name, fault.error.message);
    return await operation();
  };
  return {
    get: <T>(key: Key) => run(meets("get", [key]), () => store.get<T>(key)),
    set: (key, value, options) => run(meets("set", [key]), () => store.set(key, value, options)),
    delete: (key) => run(meets("delete", [key]), () => store.delete(key)),
    commit: (checks, mutations, options) =>
      run(
        meets("commit", mutations.map((m) => m.key)),
        () => store.commit(checks, mutations, options),
      ),
    async *list<T>(prefix: Key, options?: ListOptions) {
      yield* await run(
        meets("list", [prefix]),
        () => Promise.resolve(store.list<T>(prefix, options)),
      );
    },
    snapshot: (prefix) => run(meets("snapshot", [prefix ?? []]), () => store.snapshot(prefix)),
    close: () => store.close(),
  };
}

function _error(name: string, message: string): Error {
  const Kind = ({ TypeError, RangeError } as Record<string, ErrorConstructor>)[name] ?? Error;
  const error = new Kind(message);
  error.name = name;
  return error;
}
