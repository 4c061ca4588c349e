// The stores a section measures the server on: Deno KV in memory, and PostgreSQL on a private
// cluster started for the section (testkit/pg_cluster.ts: Debian's postgresql package, on
// this machine, sharing its cores with the server and the load generator).
import { startPgCluster } from "../testkit/pg_cluster.ts";

export interface BenchStore {
  /** For the tables: `kv` or `postgres`. */
  readonly name: string;
  /** A server's VESTIBULE_DATA: a new, empty store each call. */
  data(): Promise<string>;
}

/** Runs `measure` on each store in turn; the results in order. */
export async function onEachStore<T>(measure: (store: BenchStore) => Promise<T>): Promise<T[]> {
  const results = [await measure({ name: "kv", data: () => Promise.resolve(":memory:") })];
  const cluster = await startPgCluster();
  try {
    results.push(await measure({ name: "postgres", data: () => cluster.database() }));
  } finally {
    await cluster.stop();
  }
  return results;
}
