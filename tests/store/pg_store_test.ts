import assert from "node:assert/strict";
import { openPgStore, PgStoreError, PURGE_INTERVAL_MS } from "../../src/store/pg_store.ts";
import { CURRENT_SCHEMA, MIGRATIONS, prepareSchema, readSchemaVersion } from "../../src/schema.ts";
import type { Store } from "../../src/store/store.ts";
import { startPgCluster } from "../../testkit/pg_cluster.ts";
import { manualClock, storeContract } from "./store_contract.ts";

// One private cluster for the whole file (about a second to start); a database per store.
Deno.test("pg store", async (t) => {
  const cluster = await startPgCluster();
  const open = (url: string, now?: () => number) =>
    openPgStore({ url, poolSize: 4, ...(now ? { now } : {}) });
  /** Two stores on one new database: two pools, as two replicas have. */
  const twoStores = async (fn: (a: Store, b: Store, url: string) => Promise<void>) => {
    const url = await cluster.database();
    const [a, b] = await Promise.all([open(url), open(url)]);
    try {
      await fn(a, b, url);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  };
  try {
    await t.step("passes the store contract", async (t) => {
      await storeContract(t, { open: async (now) => open(await cluster.database(), now) });
    });

    await t.step(
      "an absent-key check holds against a concurrent insert from another pool",
      () =>
        twoStores(async (a, b) => {
          for (let round = 0; round < 20; round++) {
            const claim = (store: Store, who: string) =>
              store.commit([{ key: ["claim", round], version: null }], [
                { type: "set", key: ["claim", round], value: who },
              ]);
            const results = await Promise.all([
              claim(a, "a1"),
              claim(b, "b1"),
              claim(a, "a2"),
              claim(b, "b2"),
            ]);
            assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results}`);
            const winner = ["a1", "b1", "a2", "b2"][results.indexOf(true)];
            assert.equal((await a.get(["claim", round]))?.value, winner);
          }
        }),
    );

    await t.step(
      "versioned commits from two pools lose no update",
      () =>
        twoStores(async (a, b) => {
          await a.set(["counter"], 0);
          const increment = async (store: Store) => {
            for (;;) {
              const entry = (await store.get<number>(["counter"]))!;
              const ok = await store.commit([{ key: ["counter"], version: entry.version }], [
                { type: "set", key: ["counter"], value: entry.value + 1 },
              ]);
              if (ok) return;
            }
          };
          await Promise.all(
            Array.from({ length: 40 }, (_, i) => increment(i % 2 === 0 ? a : b)),
          );
          assert.equal((await b.get(["counter"]))?.value, 40);
        }),
    );

    await t.step("two processes racing checked commits lose no update and claim once", async () => {
      const url = await cluster.database();
      const storeModule = new URL("../../src/store/pg_store.ts", import.meta.url).href;
      // Each process: 25 versioned increments of one counter, and a claim of each of 25 keys.
      const racer = (name: string) => `
        const { openPgStore } = await import(${JSON.stringify(storeModule)});
        const store = await openPgStore({ url: ${JSON.stringify(url)}, poolSize: 4 });
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
          args: [
            "eval",
            "--config",
            new URL("../../deno.json", import.meta.url).pathname,
            racer(name),
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
      const outputs = await Promise.all([run("first"), run("second")]);
      const claims = outputs.map((output) => {
        assert.ok(output.success, new TextDecoder().decode(output.stderr));
        return Number(new TextDecoder().decode(output.stdout));
      });
      assert.equal(claims[0]! + claims[1]!, 25, `claims ${claims}`);
      const store = await open(url);
      try {
        assert.equal((await store.get(["counter"]))?.value, 50);
      } finally {
        await store.close();
      }
    });

    await t.step(
      "a plain set waits for a commit holding its key, never lands inside it",
      () =>
        twoStores(async (a, b) => {
          // The set returns, so it is ordered before the claim (which then fails) or after it
          // (and overwrites it): either way the record ends as the set left it.
          for (let round = 0; round < 20; round++) {
            const key = ["mixed", round];
            const [claimed] = await Promise.all([
              a.commit([{ key, version: null }], [
                { type: "set", key, value: "claim" },
                { type: "set", key: ["mixed-shadow", round], value: "claim" },
              ]),
              b.set(key, "set"),
            ]);
            const value = (await a.get(key))?.value;
            const shadow = (await a.get(["mixed-shadow", round]))?.value;
            if (claimed) assert.equal(shadow, "claim");
            else assert.equal(shadow, undefined);
            assert.equal(value, "set", `round ${round}: claimed ${claimed}`);
          }
        }),
    );

    await t.step("expired rows read as absent and a later write deletes them", async () => {
      const url = await cluster.database();
      const clock = manualClock();
      const store = await open(url, clock.now);
      const rows = async () =>
        Number(await cluster.superuser("SELECT count(*) FROM vestibule_records", _name(url)));
      try {
        await store.set(["short"], 1, { expireIn: 1_000 });
        await store.set(["kept"], 2);
        clock.advance(1_000);
        assert.equal(await store.get(["short"]), null);
        assert.equal(await rows(), 2, "still stored, read as absent");
        clock.advance(PURGE_INTERVAL_MS);
        await store.set(["other"], 3);
        assert.equal(await rows(), 2, "short purged; kept and other stay");
        assert.equal((await store.get(["kept"]))?.value, 2);
      } finally {
        await store.close();
      }
    });

    await t.step(
      "fractional clocks and expiries (rates divide) are kept to the millisecond",
      async () => {
        const clock = manualClock();
        const store = await open(await cluster.database(), clock.now);
        try {
          clock.advance(0.5);
          await store.set(["rate"], 1, { expireIn: 60_000 / (5 / 15) }); // 180000.00000000003
          await store.commit([{ key: ["once"], version: null }], [
            { type: "set", key: ["once"], value: 2, expireIn: 1_000.25 },
          ]);
          clock.advance(1_000);
          assert.equal((await store.get(["once"]))?.value, 2);
          clock.advance(1);
          assert.equal(await store.get(["once"]), null);
          assert.equal((await store.get(["rate"]))?.value, 1);
        } finally {
          await store.close();
        }
      },
    );

    await t.step("two openers racing on a new database both start on one layout", async () => {
      for (let round = 0; round < 3; round++) {
        const url = await cluster.database();
        const stores = await Promise.all(Array.from({ length: 4 }, () => open(url)));
        try {
          await stores[0]!.set(["made"], round);
          assert.equal((await stores[3]!.get(["made"]))?.value, round);
          assert.equal(
            await cluster.superuser("SELECT version FROM vestibule_layout", _name(url)),
            "1\n",
          );
        } finally {
          await Promise.all(stores.map((store) => store.close()));
        }
      }
    });

    await t.step("a layout newer than this release is refused at open", async () => {
      const url = await cluster.database();
      await (await open(url)).close();
      await cluster.superuser("UPDATE vestibule_layout SET version = 99", _name(url));
      await assert.rejects(
        open(url),
        new PgStoreError(
          "the tables are at layout version 99, newer than this release knows (1): " +
            "run the release that made them",
        ),
      );
    });

    await t.step(
      "a snapshot is one moment while commits move records",
      () =>
        twoStores(async (a, b) => {
          // Ten accounts holding 100 in all; a writer moves amounts between them meanwhile.
          for (let i = 0; i < 10; i++) await a.set(["acct", i], 10);
          let moving = true;
          const writer = (async () => {
            for (let n = 0; moving; n++) {
              const from = (await a.get<number>(["acct", n % 10]))!;
              const to = (await a.get<number>(["acct", (n + 3) % 10]))!;
              await a.commit([from, to], [
                { type: "set", key: from.key, value: from.value - 1 },
                { type: "set", key: to.key, value: to.value + 1 },
              ]);
            }
          })();
          try {
            for (let i = 0; i < 30; i++) {
              const records = await b.snapshot(["acct"]);
              assert.equal(records.length, 10);
              assert.equal(records.reduce((sum, r) => sum + (r.value as number), 0), 100);
            }
          } finally {
            moving = false;
            await writer;
          }
        }),
    );

    await t.step(
      "the store's schema migrations run on it, from two replicas at once",
      () =>
        twoStores(async (a, b) => {
          // A store from before version 2: no stamp, a session under the hex digest of its secret.
          const hex = "ab".repeat(32);
          await a.set(["accounts", "session", hex], { accountId: "x" }, { expireIn: 60_000 });
          const [first, second] = await Promise.all([
            prepareSchema(a, Date.now),
            prepareSchema(b, Date.now),
          ]);
          // Both run every step (each is idempotent); the stamp ends at the current version.
          assert.deepEqual([first.length, second.length], [MIGRATIONS.length, MIGRATIONS.length]);
          assert.equal(await readSchemaVersion(b), CURRENT_SCHEMA);
          const sessions = await a.snapshot(["accounts", "session"]);
          assert.deepEqual(sessions.map((r) => [r.key[2], r.value]), [
            ["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", { accountId: "x" }],
          ]);
        }),
    );

    await t.step("sslmode: require encrypts, verify-full checks the certificate", async () => {
      const url = await cluster.database();
      const encrypted = async (sslmode: string) => {
        const store = await open(`${url}?sslmode=${sslmode}`);
        try {
          return await cluster.superuser(
            "SELECT bool_and(ssl) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) " +
              `WHERE application_name = 'vestibule' AND datname = '${_name(url)}'`,
          );
        } finally {
          await store.close();
        }
      };
      assert.equal(await encrypted("require"), "t\n");
      assert.equal(await encrypted("disable"), "f\n");
      // The cluster's certificate is self-signed: verify-full refuses it.
      const error = await open(`${url}?sslmode=verify-full`).catch((e) => e);
      assert.ok(error instanceof PgStoreError);
      assert.match(error.message, /certificate/i);
      assert.ok(!error.message.includes(cluster.password));
    });

    await t.step("a wrong password is refused in one line that does not hold it", async () => {
      const url = new URL(await cluster.database());
      url.password = "not-the-password";
      const error = await open(url.href).catch((e) => e);
      assert.ok(error instanceof PgStoreError);
      assert.equal(
        error.message,
        'password authentication failed for user "vestibule" (SQLSTATE 28P01)',
      );
    });

    await t.step("a role that may not create the tables gets a line that says so", async () => {
      const url = new URL(await cluster.database());
      await cluster.superuser(`ALTER SCHEMA public OWNER TO postgres;`, _name(url.href));
      const error = await open(url.href).catch((e) => e);
      assert.ok(error instanceof PgStoreError);
      assert.match(error.message, /^permission denied for schema public \(SQLSTATE 42501\): /);
    });
  } finally {
    await cluster.stop();
  }
});

function _name(url: string): string {
  return new URL(url).pathname.slice(1);
}
