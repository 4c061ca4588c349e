// The store's deadline and short circuit (src/store/store_guard.ts) over a store whose server
// stops answering: the first operation is told "unavailable" at its deadline, then one probe at a
// time reaches the server while every other operation fails at once, and the first probe that
// answers lets everything through again.
import assert from "node:assert/strict";
import { openKvStore } from "../../src/store/kv_store.ts";
import { guardStore } from "../../src/store/store_guard.ts";
import { type Store, StoreUnavailableError } from "../../src/store/store.ts";

/** A store in front of a real one that can be made to hang; counts what reached it. */
function hangingStore(inner: Store) {
  let frozen: Promise<void> | null = null;
  let thaw = () => {};
  const counts = { operations: 0, probes: 0 };
  const gate = async () => {
    counts.operations++;
    if (frozen !== null) await frozen;
  };
  const store: Store = {
    get: async (key) => (await gate(), await inner.get(key)),
    set: async (key, value, options) => (await gate(), await inner.set(key, value, options)),
    delete: async (key) => (await gate(), await inner.delete(key)),
    commit: async (checks, mutations) => (await gate(), await inner.commit(checks, mutations)),
    async *list(prefix, options) {
      await gate();
      yield* inner.list(prefix, options);
    },
    snapshot: async (prefix) => (await gate(), await inner.snapshot(prefix)),
    close: () => inner.close(),
  };
  return {
    store,
    counts,
    probe: async () => {
      counts.probes++;
      await store.get(["ready"]);
    },
    freeze() {
      frozen = new Promise((resolve) => thaw = resolve);
    },
    thaw() {
      frozen = null;
      thaw();
    },
  };
}

Deno.test("a store that stops answering: deadline, then one probe at a time, then back", async () => {
  const kv = await openKvStore(":memory:");
  const server = hangingStore(kv);
  const store = guardStore(server.store, { deadlineMs: 50, probe: server.probe });
  try {
    await store.set(["a"], 1);
    assert.equal((await store.get<number>(["a"]))?.value, 1);

    server.freeze();
    await assert.rejects(store.get(["a"]), StoreUnavailableError, "told at its deadline");
    await assert.rejects(
      (async () => {
        for await (const _ of store.list(["a"])) break;
      })(),
      StoreUnavailableError,
    );

    // Open: 200 operations at once make one probe between them, and no operation of their own.
    const [reached, probed] = [server.counts.operations, server.counts.probes];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, n) => n % 2 ? store.get(["a"]) : store.set(["b"], n)),
    );
    assert.ok(
      outcomes.every((o) => o.status === "rejected" && o.reason instanceof StoreUnavailableError),
    );
    assert.deepEqual([server.counts.operations - reached, server.counts.probes - probed], [1, 1]);

    // The probe that missed its deadline ended; the next operation sends another.
    await assert.rejects(store.commit([], []), StoreUnavailableError);
    assert.equal(server.counts.probes - probed, 2);

    server.thaw();
    assert.equal((await store.get<number>(["a"]))?.value, 1, "a probe that answers closes it");
    assert.equal(server.counts.probes - probed, 3);
    await store.set(["b"], 2);
    assert.equal((await store.get<number>(["b"]))?.value, 2);
    assert.equal(server.counts.probes - probed, 3, "closed: no more probes");
  } finally {
    await store.close();
  }
});

Deno.test("an outage the server reports (not a silence) opens the circuit too", async () => {
  let down = true;
  let probes = 0;
  const kv = await openKvStore(":memory:");
  const failing: Store = {
    ...kv,
    get: (key) => down ? Promise.reject(new StoreUnavailableError("refused")) : kv.get(key),
  };
  const store = guardStore(failing, {
    deadlineMs: 60_000,
    probe: () => (probes++, failing.get(["ready"])),
  });
  try {
    await assert.rejects(store.get(["a"]), /refused/);
    await assert.rejects(store.get(["a"]), /refused/);
    assert.equal(probes, 1, "the second read was the probe's");
    down = false;
    assert.equal(await store.get(["a"]), null);
  } finally {
    await store.close();
  }
});
