/**
 * A Store whose operations are CLIENT spans (`store get`, `store commit`, …) with the database
 * conventions' `db.system.name` and `db.operation.name`; never a key or a value, which may hold
 * an e-mail address. app.ts wraps the store in it only when tracing is on. Listings are not
 * spans: their entries are read as the caller goes.
 */
import type { Tracing } from "../tracing/tracing.ts";
import type { StoreKind } from "../config/data_url.ts";
import type { Key, Store } from "./store.ts";

const SYSTEMS: Record<StoreKind, string> = {
  kv: "deno_kv",
  sqlite: "sqlite",
  postgres: "postgresql",
};

export function withStoreSpans(store: Store, kind: StoreKind, tracing: Tracing): Store {
  const system = SYSTEMS[kind];
  const traced = <R>(operation: string, run: () => Promise<R>): Promise<R> =>
    tracing.span(`store ${operation}`, {
      kind: "client",
      attributes: { "db.system.name": system, "db.operation.name": operation },
    }, run);
  return {
    get: <T>(key: Key) => traced("get", () => store.get<T>(key)),
    set: (key, value, options) => traced("set", () => store.set(key, value, options)),
    delete: (key) => traced("delete", () => store.delete(key)),
    commit: (checks, mutations, options) =>
      traced("commit", () => store.commit(checks, mutations, options)),
    snapshot: (prefix) => traced("snapshot", () => store.snapshot(prefix)),
    list: (prefix, options) => store.list(prefix, options),
    close: () => store.close(),
  };
}
