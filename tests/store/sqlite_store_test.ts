import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { openSqliteStore, PURGE_INTERVAL_MS } from "../../src/store/sqlite_store.ts";
import { StoreBusyError } from "../../src/store/store.ts";
import { recordProblem, STORE_LIMITS } from "../../src/store/limits.ts";
import { CURRENT_SCHEMA, MIGRATIONS, prepareSchema, readSchemaVersion } from "../../src/schema.ts";
import { holdWriteLock, type LockHolder } from "./lock_holder.ts";
import { manualClock, storeContract } from "./store_contract.ts";

Deno.test("sqlite store (:memory:) passes the store contract", async (t) => {
  await storeContract(t, { open: (now) => openSqliteStore(":memory:", now) });
});

Deno.test("sqlite store (file) passes the store contract", async (t) => {
  const dir = await Deno.makeTempDir();
  let n = 0;
  try {
    await storeContract(t, {
      open: (now) => openSqliteStore(`${dir}/contract-${n++}.sqlite`, now),
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store keeps data and expiries across a reopen, in an owner-only file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/nested/dir/store.sqlite`;
  const clock = manualClock();
  try {
    const first = await openSqliteStore(path, clock.now);
    await first.set(["kept"], { ok: true });
    await first.set(["short"], 1, { expireIn: 60_000 });
    await first.close();
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const second = await openSqliteStore(path, clock.now);
    try {
      assert.deepEqual((await second.get(["kept"]))?.value, { ok: true });
      assert.equal((await second.get(["short"]))?.value, 1);
      clock.advance(60_000);
      assert.equal(await second.get(["short"]), null, "expiry survives a reopen too");
    } finally {
      await second.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store refuses what Deno KV refuses, so its backup loads into any store", async () => {
  const store = await openSqliteStore(":memory:");
  try {
    const longer = ["a", "k".repeat(STORE_LIMITS.keyBytes - 4)];
    await assert.rejects(store.set(longer, 1), new TypeError(recordProblem(longer, 1)!));
    await store.set(["a", "k".repeat(STORE_LIMITS.keyBytes - 5)], 1);
    await assert.rejects(store.set(["a"], "x".repeat(STORE_LIMITS.valueBytes)), /bytes stored/);
    const many = Array.from(
      { length: STORE_LIMITS.commitWrites + 1 },
      (_, i) => ({ type: "delete" as const, key: ["m", i] }),
    );
    await assert.rejects(store.commit([], many), /1001 writes, more than a store takes \(1000\)/);
    await store.commit([], many.slice(1));
    // About 16 KiB each: 50 fit one record apiece but not one commit together.
    const big = Array.from(
      { length: 50 },
      (_, i) => ({ type: "set" as const, key: ["b", i], value: "x".repeat(16_384) }),
    );
    await assert.rejects(store.commit([], big), /the commit's writes are \d+ bytes/);
    assert.equal(await store.get(["b", 0]), null, "nothing of a refused commit is written");
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: expired rows read as absent and a later write deletes them", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/purge.sqlite`;
  const clock = manualClock();
  const store = await openSqliteStore(path, clock.now);
  const { DatabaseSync } = await import("node:sqlite");
  const rows = () => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM vestibule_records").get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  try {
    await store.set(["short"], 1, { expireIn: 1_000 });
    await store.set(["kept"], 2);
    clock.advance(1_000);
    assert.equal(await store.get(["short"]), null);
    assert.equal(rows(), 2, "still stored, read as absent");
    clock.advance(PURGE_INTERVAL_MS);
    await store.set(["other"], 3);
    assert.equal(rows(), 2, "short purged; kept and other stay");
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a write waits while another process holds the file, then goes through", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/busy.sqlite`;
  let holder: LockHolder | null = null;
  const pauses: number[] = [];
  const store = await openSqliteStore(path, Date.now, (attempt) => {
    pauses.push(attempt);
    return attempt === 1 ? holder!.release() : null;
  });
  try {
    await store.set(["before"], 1);
    holder = await holdWriteLock(path);
    assert.equal((await store.get(["before"]))?.value, 1, "reads go on beside the writer (WAL)");
    const ok = await store.commit([{ key: ["first"], version: null }], [
      { type: "set", key: ["first"], value: "mine" },
    ]);
    assert.equal(ok, true);
    assert.deepEqual(pauses, [1], "the write met the lock once");
    assert.equal((await store.get(["first"]))?.value, "mine");
  } finally {
    await holder?.release();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a write gives up with StoreBusyError when the file stays locked", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/busy.sqlite`;
  const store = await openSqliteStore(
    path,
    Date.now,
    (attempt) => attempt < 3 ? Promise.resolve() : null,
  );
  const holder = await holdWriteLock(path);
  try {
    await assert.rejects(
      store.commit([{ key: ["k"], version: null }], [{ type: "set", key: ["k"], value: 1 }]),
      new StoreBusyError("the store stayed locked by another process through 3 attempts"),
    );
  } finally {
    await holder.release();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: two processes racing checked commits on one file lose no update and claim once", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/race.sqlite`;
  const storeModule = new URL("../../src/store/sqlite_store.ts", import.meta.url).href;
  // Each process: 25 versioned increments of one counter, and a claim of each of 25 keys.
  const racer = (name: string) => `
    const { openSqliteStore } = await import(${JSON.stringify(storeModule)});
    const store = await openSqliteStore(${JSON.stringify(path)});
    let claimed = 0;
    for (let i = 0; i < 25; i++) {
      for (;;) {
        const entry = await store.get(["counter"]);
        const ok = await store.commit(
          [{ key: ["counter"], version: entry?.version ?? null }],
          [{ type: "set", key: ["counter"], value: (entry?.value ?? 0) + 1 }],
        );
        if (ok) break;
      }
      if (await store.commit([{ key: ["claim", i], version: null }], [
        { type: "set", key: ["claim", i], value: ${JSON.stringify(name)} },
      ])) claimed++;
    }
    await store.close();
    console.log(claimed);
  `;
  const run = (name: string) =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "--config", new URL("../../deno.json", import.meta.url).pathname, racer(name)],
      stdout: "piped",
      stderr: "piped",
    }).output();
  try {
    const outputs = await Promise.all([run("first"), run("second")]);
    const claims = outputs.map((output) => {
      assert.ok(output.success, new TextDecoder().decode(output.stderr));
      return Number(new TextDecoder().decode(output.stdout));
    });
    assert.equal(claims[0]! + claims[1]!, 25, `claims ${claims}`);
    const store = await openSqliteStore(path);
    try {
      assert.equal((await store.get(["counter"]))?.value, 50);
    } finally {
      await store.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: the schema migrations run on it, from two connections to one file at once", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/migrate.sqlite`;
  const [a, b] = await Promise.all([openSqliteStore(path), openSqliteStore(path)]);
  try {
    // A store from before version 2: no stamp, a session under the hex digest of its secret.
    const hex = "ab".repeat(32);
    await a.set(["accounts", "session", hex], { accountId: "x" }, { expireIn: 60_000 });
    const [first, second] = await Promise.all([
      prepareSchema(a, Date.now),
      prepareSchema(b, Date.now),
    ]);
    // Each runs the steps it finds not yet stamped (each step is idempotent): every one at least once.
    assert.ok(Math.max(first.length, second.length) === MIGRATIONS.length, `${first} | ${second}`);
    assert.equal(await readSchemaVersion(b), CURRENT_SCHEMA);
    const sessions = await a.snapshot(["accounts", "session"]);
    assert.deepEqual(sessions.map((r) => [r.key[2], r.value]), [
      ["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", { accountId: "x" }],
    ]);
  } finally {
    await Promise.all([a.close(), b.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a file laid out by a newer release is refused, untouched", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/newer.sqlite`;
  try {
    await (await openSqliteStore(path)).close();
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(path);
    db.exec("PRAGMA user_version = 99");
    db.close();
    await assert.rejects(
      openSqliteStore(path),
      new Error(
        "the file is at layout version 99, newer than this release knows (1): " +
          "run the release that made it",
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite store: a burst of calls lets the event loop take turns (node:sqlite is synchronous)", async () => {
  const store = await openSqliteStore(":memory:");
  try {
    // Runs at the event loop's next turn, which a burst must not hold back.
    let firedAfter: number | null = null;
    let done = 0;
    setImmediate(() => firedAfter = done);
    await Promise.all(Array.from({ length: 8 }, async (_, worker) => {
      for (let i = 0; i < 50; i++) {
        const key = ["burst", worker, i];
        await store.commit([{ key, version: null }], [{ type: "set", key, value: i }]);
        done++;
      }
    }));
    assert.notEqual(firedAfter, null);
    assert.ok(firedAfter! < 400, `the timer waited for ${firedAfter} of 400 commits`);
  } finally {
    await store.close();
  }
});

Deno.test("sqlite store: deferred commits are seen at once and kept when their process is killed", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/deferred.sqlite`;
  const storeModule = new URL("../../src/store/sqlite_store.ts", import.meta.url).href;
  // Deferred commits, then a line on stdout, then nothing: the process is killed mid-window.
  const writer = `
    const { openSqliteStore } = await import(${JSON.stringify(storeModule)});
    const store = await openSqliteStore(${JSON.stringify(path)});
    for (let i = 0; i < 20; i++) {
      await store.commit([], [{ type: "set", key: ["entry", i], value: { i } }], {
        durability: "deferred",
      });
    }
    console.log("committed");
    await new Promise(() => {});
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", new URL("../../deno.json", import.meta.url).pathname, writer],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value?.trim(), "committed");
    reader.releaseLock();
    const store = await openSqliteStore(path);
    try {
      assert.equal((await store.snapshot(["entry"])).length, 20, "seen by another connection");
    } finally {
      await store.close();
    }
    child.kill("SIGKILL");
    assert.equal((await child.status).signal, "SIGKILL");
    const reopened = await openSqliteStore(path);
    try {
      const kept = await reopened.snapshot(["entry"]);
      assert.deepEqual(
        kept.map((record) => record.value),
        [...Array(20).keys()].map((i) => ({ i })),
      );
    } finally {
      await reopened.close();
    }
  } finally {
    await child.stdout.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
