import assert from "node:assert/strict";
import { commitGroups, type CommitPart } from "../../src/store/commit_groups.ts";
import { openKvStore } from "../../src/store/kv_store.ts";

/** A part as the gateway writes a pin: one check that the key is absent, one set. */
const _part = (key: string, value: unknown): CommitPart => ({
  checks: [{ key: ["t", key], version: null }],
  mutations: [{ type: "set", key: ["t", key], value }],
});

Deno.test("commit groups stay within every bound of a Deno KV commit, in order", async () => {
  const parts = [
    // More checks than a commit takes, then more bytes, then more key bytes.
    ...Array.from({ length: 250 }, (_, i) => _part(`small${i}`, i)),
    ...Array.from({ length: 40 }, (_, i) => _part(`large${i}`, "v".repeat(60_000))),
    ...Array.from({ length: 90 }, (_, i) => _part(`${"k".repeat(1_900)}${i}`, i)),
  ];
  const groups = commitGroups(parts);
  assert.deepEqual(groups.flat(), parts, "every part once, in order");
  assert.ok(groups.length > 5, `${groups.length} groups`);
  const store = await openKvStore(":memory:");
  try {
    // The same parts in one commit are more than KV takes: the grouping is what makes them fit.
    await assert.rejects(() =>
      store.commit(parts.flatMap((p) => p.checks), parts.flatMap((p) => p.mutations))
    );
    for (const group of groups) {
      const ok = await store.commit(
        group.flatMap((part) => part.checks),
        group.flatMap((part) => part.mutations),
      );
      assert.ok(ok);
    }
    let stored = 0;
    for await (const _ of store.list(["t"])) stored++;
    assert.equal(stored, parts.length);
  } finally {
    await store.close();
  }
});
