// A backup loads into any store: Deno KV to SQLite to PostgreSQL and back to Deno KV, every
// record the same, values KV keeps beyond JSON included, each expiry kept as an absolute time.
import assert from "node:assert/strict";
import { exportLines, importBackup, parseBackup } from "../../src/store/backup.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { openPgStore } from "../../src/store/pg_store.ts";
import { openSqliteStore } from "../../src/store/sqlite_store.ts";
import type { Store, StoredRecord } from "../../src/store/store.ts";
import { startPgCluster } from "../../testkit/pg_cluster.ts";
import { manualClock } from "./store_contract.ts";

Deno.test("a backup goes from Deno KV to SQLite to PostgreSQL and back to Deno KV, record for record", async () => {
  const clock = manualClock();
  const cluster = await startPgCluster();
  const stores: Store[] = [];
  const open = async (store: Promise<Store>) => {
    stores.push(await store);
    return stores.at(-1)!;
  };
  const records = async (store: Store) =>
    (await store.snapshot()).map(({ version: _, ...record }: StoredRecord) => record);
  try {
    const kv = await open(openKvStore(":memory:", clock.now));
    await kv.set(["a", "é\u0000b", -2.5], { bytes: new Uint8Array([0, 255]), big: 2n ** 70n });
    await kv.set(["a", 10], { when: new Date(0), odd: [NaN, -Infinity], tag: { $bytes: "x" } });
    await kv.set(["b"], "soon", { expireIn: 60_000 });
    await kv.set(["c", ""], null);
    const original = await records(kv);
    let from = kv;
    for (
      const next of [
        openSqliteStore(":memory:", clock.now),
        openPgStore({ url: await cluster.database(), poolSize: 2, now: clock.now }),
        openKvStore(":memory:", clock.now),
      ]
    ) {
      const to = await open(next);
      const text = (await exportLines(from, clock.now, 4)).join("\n");
      assert.equal(await importBackup(to, parseBackup(text), clock.now), original.length);
      assert.deepEqual(await records(to), original);
      from = to;
    }
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await cluster.stop();
  }
});
