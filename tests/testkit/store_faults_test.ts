// The store faults the black-box tests set (testkit/store_faults.ts): which operations and keys a
// fault meets, how it fails or stalls them, and that everything else goes through untouched.
import assert from "node:assert/strict";
import { openKvStore } from "../../src/store/kv_store.ts";
import { type StoreFault, withFaults } from "../../testkit/store_faults.ts";

Deno.test("a store fault meets only its operations and keys, and ends when it is taken away", async () => {
  const store = await openKvStore(":memory:", Date.now);
  let fault: StoreFault | null = null;
  const faulty = withFaults(store, () => fault);
  try {
    await faulty.set(["ws", "b1", "upstream_pin", "broken", "a"], 1);
    fault = {
      operations: ["commit", "set"],
      key: ["ws", "", "upstream_", "broken"],
      error: { name: "TypeError", message: "database is locked" },
    };
    const pin = (upstream: string) => ({
      type: "set" as const,
      key: ["ws", "b1", "upstream_pin", upstream, "a"],
      value: 2,
    });
    const refused = await faulty.commit([], [pin("working"), pin("broken")]).catch((e) => e);
    assert.ok(refused instanceof TypeError);
    assert.equal(`${refused.name}: ${refused.message}`, "TypeError: database is locked");
    assert.equal(await faulty.commit([], [pin("working")]), true, "another upstream's pin");
    await faulty.set(["ws", "b1", "upstream_hold", "working", "a"], 3);
    await assert.rejects(faulty.set(["ws", "b2", "upstream_first", "broken"], 4), TypeError);
    // Reads are not among its operations; nothing of the refused commit was written.
    assert.equal((await faulty.get(["ws", "b1", "upstream_pin", "broken", "a"]))?.value, 1);
    fault = null;
    assert.equal(await faulty.commit([], [pin("broken")]), true);
    assert.equal((await store.get(["ws", "b1", "upstream_pin", "broken", "a"]))?.value, 2);
  } finally {
    await store.close();
  }
});

Deno.test("a store fault with no operations or key fails every one; a delay holds it first", async () => {
  const store = await openKvStore(":memory:", Date.now);
  let fault: StoreFault | null = { error: { name: "Error", message: "disk gone" } };
  const faulty = withFaults(store, () => fault);
  try {
    const failures = await Promise.all([
      faulty.get(["a"]),
      faulty.set(["a"], 1),
      faulty.delete(["a"]),
      faulty.commit([], []),
      faulty.snapshot(),
      (async () => {
        for await (const _ of faulty.list(["a"])) return;
      })(),
    ].map((operation) => operation.then(() => "went through", (e: Error) => e.message)));
    assert.deepEqual(failures, Array(6).fill("disk gone"));
    fault = { operations: ["commit"], key: ["audit"], delayMs: 60 };
    await faulty.set(["audit", "x"], 1);
    const started = performance.now();
    await faulty.commit([], [{ type: "set", key: ["audit", "y"], value: 1 }]);
    assert.ok(performance.now() - started >= 55, "the audit commit waited");
    assert.equal((await store.get(["audit", "y"]))?.value, 1);
  } finally {
    await store.close();
  }
});
