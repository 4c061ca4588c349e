import assert from "node:assert/strict";
import { openKvStore } from "../../src/store/kv_store.ts";
import { nestsDeeperThan, recordProblem, STORE_LIMITS } from "../../src/store/limits.ts";

/** `levels` arrays one inside the other around a number. */
const nested = (levels: number) => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

Deno.test("the largest key and value the limits accept are what Deno KV takes, and one more is refused", async () => {
  const store = await openKvStore(":memory:");
  try {
    // ["a", s]: 2 + 1 bytes for "a", 1 + length + 1 for s.
    const key = ["a", "k".repeat(STORE_LIMITS.keyBytes - 5)];
    assert.equal(recordProblem(key, 1), null);
    await store.set(key, 1);
    const longer = ["a", "k".repeat(STORE_LIMITS.keyBytes - 4)];
    assert.equal(
      recordProblem(longer, 1),
      "the key is 2049 bytes, more than a store takes (2048)",
    );
    await assert.rejects(store.set(longer, 1), /Key too large/);

    let length = 65_000;
    while (recordProblem(["a"], "x".repeat(length + 1)) === null) length++;
    await store.set(["a"], "x".repeat(length), { expireIn: 1000 });
    assert.match(recordProblem(["a"], "x".repeat(length + 1))!, /^the value is 65537 bytes stored/);
    await assert.rejects(
      store.set(["a"], "x".repeat(length + 10), { expireIn: 1000 }),
      /too large/,
    );

    assert.equal(recordProblem(["a"], nested(STORE_LIMITS.depth)), null);
    await store.set(["a"], nested(STORE_LIMITS.depth));
    assert.equal(
      recordProblem(["a"], nested(STORE_LIMITS.depth + 1)),
      "the value nests more than 100 levels deep, more than a store takes",
    );
  } finally {
    await store.close();
  }
});

Deno.test("nesting is measured without recursion, however deep", () => {
  assert.equal(nestsDeeperThan(nested(200_000), 100), true);
  assert.equal(nestsDeeperThan({ a: [{ b: new Uint8Array(3) }] }, 3), false);
  assert.equal(nestsDeeperThan({ a: [{ b: [] }] }, 3), true);
  assert.equal(nestsDeeperThan("text", 0), false);
});
