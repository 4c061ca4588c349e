import assert from "node:assert/strict";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock, storeContract } from "./store_contract.ts";

Deno.test("kv store (:memory:) passes the store contract", async (t) => {
  await storeContract(t, { open: (now) => openKvStore(":memory:", now) });
});

Deno.test("kv store (file) passes the store contract", async (t) => {
  const dir = await Deno.makeTempDir();
  let n = 0;
  try {
    await storeContract(t, { open: (now) => openKvStore(`${dir}/contract-${n++}.kv`, now) });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv store keeps data across a close and reopen of its file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/nested/dir/store.kv`;
  const clock = manualClock();
  try {
    const first = await openKvStore(path, clock.now);
    await first.set(["kept"], { ok: true });
    await first.set(["short"], 1, { expireIn: 60_000 });
    await first.commit([], [{ type: "set", key: ["committed"], value: "yes" }]);
    first.close();

    const second = await openKvStore(path, clock.now);
    try {
      assert.deepEqual((await second.get(["kept"]))?.value, { ok: true });
      assert.equal((await second.get(["committed"]))?.value, "yes");
      assert.equal((await second.get(["short"]))?.value, 1);
      clock.advance(60_000);
      assert.equal(await second.get(["short"]), null, "expiry survives a reopen too");
    } finally {
      second.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
