// The behaviour every Store backend must have. A backend's test calls storeContract.
import assert from "node:assert/strict";
import type { Store } from "../../src/store/store.ts";

/** A clock tests move by hand. */
export function manualClock(start = 1_800_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

export interface ContractOptions {
  /** A new, empty store reading time from `now`. */
  open(now: () => number): Promise<Store>;
}

async function _collect<T>(iterable: AsyncIterable<{ key: readonly unknown[]; value: T }>) {
  const out: [readonly unknown[], T][] = [];
  for await (const entry of iterable) out.push([entry.key, entry.value]);
  return out;
}

export async function storeContract(t: Deno.TestContext, options: ContractOptions) {
  const withStore = async (
    fn: (store: Store, clock: ReturnType<typeof manualClock>) => Promise<void>,
  ) => {
    const clock = manualClock();
    const store = await options.open(clock.now);
    try {
      await fn(store, clock);
    } finally {
      await store.close();
    }
  };

  await t.step("get of a missing key is null", () =>
    withStore(async (store) => {
      assert.equal(await store.get(["nothing", "here"]), null);
    }));

  await t.step(
    "set then get returns the value; every write changes the version",
    () =>
      withStore(async (store) => {
        await store.set(["a", 1], { n: 1 });
        const first = await store.get<{ n: number }>(["a", 1]);
        assert.deepEqual(first?.value, { n: 1 });
        assert.deepEqual(first?.key, ["a", 1]);
        await store.set(["a", 1], { n: 2 });
        const second = await store.get<{ n: number }>(["a", 1]);
        assert.deepEqual(second?.value, { n: 2 });
        assert.notEqual(second?.version, first?.version);
      }),
  );

  await t.step(
    "delete removes the key and deleting a missing key is harmless",
    () =>
      withStore(async (store) => {
        await store.set(["d"], "x");
        await store.delete(["d"]);
        await store.delete(["d"]);
        assert.equal(await store.get(["d"]), null);
      }),
  );

  await t.step(
    "list returns exactly the prefix, in key order, up to the limit",
    () =>
      withStore(async (store) => {
        await store.set(["p", "b"], 2);
        await store.set(["p", "a"], 1);
        await store.set(["p", "c"], 3);
        await store.set(["pp", "a"], "other prefix");
        await store.set(["q", "a"], "other");
        assert.deepEqual(await _collect(store.list(["p"])), [
          [["p", "a"], 1],
          [["p", "b"], 2],
          [["p", "c"], 3],
        ]);
        assert.deepEqual(await _collect(store.list(["p"], { limit: 2 })), [
          [["p", "a"], 1],
          [["p", "b"], 2],
        ]);
        // Deno KV's order: every string before every number, numbers by value.
        for (const part of [10, "z", -1.5, 2, ""]) await store.set(["n", part], part);
        assert.deepEqual(
          (await _collect(store.list(["n"]))).map(([key]) => key),
          [["n", ""], ["n", "z"], ["n", -1.5], ["n", 2], ["n", 10]],
        );
      }),
  );

  await t.step(
    "list walks backwards and resumes after a key, in either direction, never repeating it",
    () =>
      withStore(async (store) => {
        for (const key of [[1], [2], [2, "x"], [3], [5]]) await store.set(["r", ...key], key);
        await store.set(["rr", 0], "other prefix");
        const keys = async (options: Parameters<Store["list"]>[1]) =>
          (await _collect(store.list(["r"], options))).map(([key]) => key.slice(1));
        assert.deepEqual(await keys({ reverse: true }), [[5], [3], [2, "x"], [2], [1]]);
        assert.deepEqual(await keys({ after: ["r", 2] }), [[2, "x"], [3], [5]]);
        assert.deepEqual(await keys({ after: ["r", 2], limit: 2 }), [[2, "x"], [3]]);
        assert.deepEqual(await keys({ after: ["r", 3], reverse: true }), [[2, "x"], [2], [1]]);
        // A key that is not stored is a position all the same.
        assert.deepEqual(await keys({ after: ["r", 4] }), [[5]]);
        assert.deepEqual(await keys({ after: ["r", 4], reverse: true, limit: 1 }), [[3]]);
        assert.deepEqual(await keys({ after: ["r", 5] }), []);
        assert.deepEqual(await keys({ after: ["r", 1], reverse: true }), []);
      }),
  );

  await t.step(
    "a record reads as absent once the injected clock passes its expiry",
    () =>
      withStore(async (store, clock) => {
        await store.set(["e", "x"], "soon", { expireIn: 60_000 });
        await store.set(["e", "y"], "forever");
        clock.advance(59_999);
        assert.equal((await store.get(["e", "x"]))?.value, "soon");
        clock.advance(1);
        assert.equal(await store.get(["e", "x"]), null);
        assert.deepEqual(await _collect(store.list(["e"])), [[["e", "y"], "forever"]]);
      }),
  );

  await t.step(
    "commit applies every mutation, or none when a check fails",
    () =>
      withStore(async (store) => {
        await store.set(["c", "guard"], 1);
        const guard = (await store.get(["c", "guard"]))!;
        await store.set(["c", "guard"], 2); // the version read above is now stale
        const ok = await store.commit([{ key: ["c", "guard"], version: guard.version }], [
          { type: "set", key: ["c", "one"], value: 1 },
          { type: "delete", key: ["c", "guard"] },
        ]);
        assert.equal(ok, false);
        assert.equal(await store.get(["c", "one"]), null);
        assert.equal((await store.get(["c", "guard"]))?.value, 2);

        const fresh = (await store.get(["c", "guard"]))!;
        assert.equal(
          await store.commit([{ key: ["c", "guard"], version: fresh.version }], [
            { type: "set", key: ["c", "one"], value: 1 },
            { type: "set", key: ["c", "two"], value: 2, expireIn: 60_000 },
            { type: "delete", key: ["c", "guard"] },
          ]),
          true,
        );
        assert.equal((await store.get(["c", "one"]))?.value, 1);
        assert.equal((await store.get(["c", "two"]))?.value, 2);
        assert.equal(await store.get(["c", "guard"]), null);
      }),
  );

  await t.step(
    "an absent-check claims a key once; an expired record counts as absent",
    () =>
      withStore(async (store, clock) => {
        const claim = (value: string) =>
          store.commit([{ key: ["claim"], version: null }], [
            { type: "set", key: ["claim"], value, expireIn: 1_000 },
          ]);
        assert.equal(await claim("first"), true);
        assert.equal(await claim("second"), false);
        assert.equal((await store.get(["claim"]))?.value, "first");
        clock.advance(1_000);
        assert.equal(await claim("third"), true);
        assert.equal((await store.get(["claim"]))?.value, "third");
      }),
  );

  await t.step(
    "mutations in a commit expire like set does",
    () =>
      withStore(async (store, clock) => {
        await store.commit([], [{ type: "set", key: ["m"], value: 1, expireIn: 5_000 }]);
        clock.advance(5_000);
        assert.equal(await store.get(["m"]), null);
      }),
  );

  await t.step(
    "concurrent consumption of a single-use record succeeds exactly once",
    () =>
      withStore(async (store) => {
        for (let round = 0; round < 5; round++) {
          await store.set(["once", round], "secret", { expireIn: 60_000 });
          const consume = async () => {
            const entry = await store.get(["once", round]);
            if (!entry) return false;
            return await store.commit([{ key: entry.key, version: entry.version }], [
              { type: "delete", key: entry.key },
            ]);
          };
          const results = await Promise.all(Array.from({ length: 25 }, consume));
          assert.equal(results.filter(Boolean).length, 1, `round ${round}`);
          assert.equal(await store.get(["once", round]), null);
        }
      }),
  );

  await t.step("values round-trip as JSON-compatible data", () =>
    withStore(async (store) => {
      const value = { s: "é\u2028", n: 1.5, b: false, z: null, a: [1, "2", { x: [] }] };
      await store.set(["json"], value);
      assert.deepEqual((await store.get(["json"]))?.value, value);
      // What KV keeps beyond JSON, and an object shaped like the tags that carry it elsewhere.
      const rich = { bytes: new Uint8Array([0, 255]), big: 2n ** 70n, tag: { $bytes: "x" } };
      await store.set(["rich"], rich);
      assert.deepEqual((await store.get(["rich"]))?.value, rich);
      const [listed] = await Array.fromAsync(store.list(["rich"]));
      assert.equal(listed, undefined, "a key is not under itself");
      assert.deepEqual((await store.snapshot()).find((r) => r.key[0] === "rich")?.value, rich);
    }));

  await t.step(
    "snapshot holds every live record under a prefix with its absolute expiry and version",
    () =>
      withStore(async (store, clock) => {
        await store.set(["a"], { n: 1 });
        await store.set(["b", "c"], "x", { expireIn: 5_000 });
        await store.set(["d"], "gone", { expireIn: 1 });
        clock.advance(1);
        const withoutVersions = async (prefix?: string[]) =>
          (await store.snapshot(prefix)).map(({ version: _, ...record }) => record);
        assert.deepEqual(await withoutVersions(), [
          { key: ["a"], value: { n: 1 }, expiresAt: null },
          { key: ["b", "c"], value: "x", expiresAt: clock.now() - 1 + 5_000 },
        ]);
        assert.deepEqual(await withoutVersions(["b"]), [
          { key: ["b", "c"], value: "x", expiresAt: clock.now() - 1 + 5_000 },
        ]);
        const [bc] = await store.snapshot(["b"]);
        assert.equal(bc?.version, (await store.get(["b", "c"]))?.version);
      }),
  );
}
