import assert from "node:assert/strict";
import { type StoreOperation, withStoreMetrics } from "../../src/operator/store_metrics.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Store } from "../../src/store/store.ts";

function observed(): {
  readonly seen: [StoreOperation, boolean][];
  readonly observe: (operation: StoreOperation, seconds: number, failed: boolean) => void;
} {
  const seen: [StoreOperation, boolean][] = [];
  return {
    seen,
    observe: (operation, seconds, failed) => {
      assert.ok(seconds >= 0);
      seen.push([operation, failed]);
    },
  };
}

Deno.test("store metrics: each operation observed once, with the store's own answer", async () => {
  const store = await openKvStore(":memory:");
  const { seen, observe } = observed();
  const measured = withStoreMetrics(store, observe);
  try {
    await measured.set(["t", "a"], 1);
    await measured.set(["t", "b"], 2);
    assert.equal((await measured.get<number>(["t", "a"]))?.value, 1);
    assert.equal(await measured.commit([{ key: ["t", "a"], version: null }], []), false);
    await measured.delete(["t", "b"]);
    const listed = [];
    for await (const entry of measured.list<number>(["t"])) listed.push(entry.value);
    assert.deepEqual(listed, [1]);
    assert.equal((await measured.snapshot(["t"])).length, 1);
    assert.deepEqual(seen, [
      ["set", false],
      ["set", false],
      ["get", false],
      ["commit", false], // a failed check is an answer, not a failure
      ["delete", false],
      ["list", false],
      ["snapshot", false],
    ]);
  } finally {
    measured.close();
  }
});

Deno.test("store metrics: a listing the caller leaves early is observed once and closed", async () => {
  const store = await openKvStore(":memory:");
  let closed = false;
  const tracked: Store = {
    ...store,
    list: <T>(prefix: readonly (string | number)[]) => {
      const inner = store.list<T>(prefix)[Symbol.asyncIterator]();
      return {
        [Symbol.asyncIterator]: () => ({
          next: () => inner.next(),
          return: async () => {
            closed = true;
            return await inner.return!();
          },
        }),
      };
    },
  };
  const { seen, observe } = observed();
  const measured = withStoreMetrics(tracked, observe);
  try {
    for (const n of [1, 2, 3]) await store.set(["t", n], n);
    for await (const entry of measured.list<number>(["t"])) {
      assert.equal(entry.value, 1);
      break;
    }
    assert.ok(closed, "the store's listing was ended");
    assert.deepEqual(seen, [["list", false]]);
  } finally {
    store.close();
  }
});

Deno.test("store metrics: a thrown error is a failure, passed on unchanged", async () => {
  const store = await openKvStore(":memory:");
  const failing: Store = {
    ...store,
    get: () => Promise.reject(new Error("disk gone")),
    list: () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error("disk gone")) }),
    }),
    close: () => store.close(),
  };
  const { seen, observe } = observed();
  const measured = withStoreMetrics(failing, observe);
  try {
    await assert.rejects(measured.get(["x"]), /disk gone/);
    await assert.rejects(async () => {
      for await (const _ of measured.list(["x"])) { /* nothing arrives */ }
    }, /disk gone/);
    assert.deepEqual(seen, [["get", true], ["list", true]]);
  } finally {
    measured.close();
  }
});
