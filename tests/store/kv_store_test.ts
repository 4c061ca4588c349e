import assert from "node:assert/strict";
import { openKvStore } from "../../src/store/kv_store.ts";
import { StoreBusyError } from "../../src/store/store.ts";
import { holdWriteLock, type LockHolder } from "./lock_holder.ts";
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

Deno.test("kv store: a process killed mid-writes leaves every commit whole", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/crash.kv`;
  const storeModule = new URL("../../src/store/kv_store.ts", import.meta.url).href;
  // Writes pairs of records in single commits forever; says "ready" once some are down.
  const writer = `
    const { openKvStore } = await import(${JSON.stringify(storeModule)});
    const store = await openKvStore(${JSON.stringify(path)});
    for (let i = 0; ; i++) {
      await store.commit([], [
        { type: "set", key: ["account", i], value: { i } },
        { type: "set", key: ["email", i], value: i },
      ]);
      if (i === 200) await Deno.stdout.write(new TextEncoder().encode("ready\\n"));
    }
  `;
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--unstable-kv", writer],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /ready/);
    child.kill("SIGKILL");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();

    const store = await openKvStore(path);
    try {
      const accounts = new Set<number>();
      const emails = new Set<number>();
      for await (const e of store.list<{ i: number }>(["account"])) accounts.add(e.value.i);
      for await (const e of store.list<number>(["email"])) emails.add(e.value);
      assert.ok(accounts.size > 200, `only ${accounts.size} commits survived`);
      assert.deepEqual([...accounts].sort(), [...emails].sort(), "no half-made commit");
    } finally {
      store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv store: a write waits while another process holds the file, then goes through", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/busy.kv`;
  let holder: LockHolder | null = null;
  const pauses: number[] = [];
  // The first pause ends the other process's write; the retry then finds the file free.
  const store = await openKvStore(path, Date.now, (attempt) => {
    pauses.push(attempt);
    return attempt === 1 ? holder!.release() : null;
  });
  try {
    await store.set(["before"], 1);
    holder = await holdWriteLock(path);
    // A checked commit reads first: SQLite refuses its upgrade to a write at once.
    const ok = await store.commit([{ key: ["first"], version: null }], [
      { type: "set", key: ["first"], value: "mine" },
    ]);
    assert.equal(ok, true);
    assert.deepEqual(pauses, [1], "the write met the lock once");
    assert.equal((await store.get(["first"]))?.value, "mine");
  } finally {
    await holder?.release();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv store: opening a new file another process is writing waits for it", async () => {
  // Two replicas started at once on one new file: the first sets the file up inside a write
  // transaction, and SQLite refuses the second's open at once while it lasts.
  const dir = await Deno.makeTempDir();
  const path = `${dir}/new.kv`;
  await Deno.writeFile(path, new Uint8Array(), { mode: 0o600 });
  const holder = await holdWriteLock(path);
  const pauses: number[] = [];
  try {
    const store = await openKvStore(path, Date.now, (attempt) => {
      pauses.push(attempt);
      return attempt === 1 ? holder.release() : null;
    });
    try {
      assert.deepEqual(pauses, [1], "the open met the lock once");
      await store.set(["k"], 1);
      assert.equal((await store.get(["k"]))?.value, 1);
    } finally {
      store.close();
    }
  } finally {
    await holder.release();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv store: a write gives up with StoreBusyError when the file stays locked", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/busy.kv`;
  const store = await openKvStore(
    path,
    Date.now,
    (attempt) => attempt < 3 ? Promise.resolve() : null,
  );
  await store.set(["before"], 1);
  const holder = await holdWriteLock(path);
  try {
    await assert.rejects(
      store.commit([{ key: ["k"], version: null }], [{ type: "set", key: ["k"], value: 1 }]),
      new StoreBusyError("the store stayed locked by another process through 3 attempts"),
    );
  } finally {
    await holder.release();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
