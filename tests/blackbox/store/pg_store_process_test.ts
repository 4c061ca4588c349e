// main.ts on a PostgreSQL store, started as `deno task start` runs it: the start task's
// permissions reach the database, a refused login or an unreachable server stops start-up with
// one line that names VESTIBULE_DATA and never the password, and /ready follows the database
// down and back up.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { freePorts } from "../../../testkit/ports.ts";
import {
  copyProject,
  mainCommand,
  originsEnv,
  startTaskFlags,
  startup,
  whileServing,
} from "../support/main_process.ts";

Deno.test("deno task start on PostgreSQL", async (t) => {
  const cluster = await startPgCluster();
  const dir = await copyProject();
  const flags = await startTaskFlags();
  try {
    await t.step(
      "serves with the password from VESTIBULE_DATA_PASSWORD_FILE; /ready follows the database",
      async () => {
        const url = new URL(await cluster.database());
        url.password = "";
        await Deno.mkdir(`${dir}/data`, { recursive: true, mode: 0o700 });
        await Deno.writeTextFile(`${dir}/data/pg-password`, `${cluster.password}\n`, {
          mode: 0o600,
        });
        const [admin] = freePorts(1);
        const origins = originsEnv();
        const env = {
          ...origins,
          VESTIBULE_DATA: url.href,
          VESTIBULE_DATA_PASSWORD_FILE: "data/pg-password",
          VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${admin}`,
        };
        await whileServing(dir, env, async () => {
          const health = await fetch(`${origins.VESTIBULE_BASE_URL}/health`);
          assert.equal(health.status, 200);
          await health.body?.cancel();
          const ready = await fetch(`http://127.0.0.1:${admin}/ready`);
          assert.deepEqual([ready.status, await ready.json()], [200, { ready: true }]);
          // Start-up stamped the schema and made the signing key in the database.
          const keys = await cluster.superuser(
            "SELECT count(*) FROM vestibule_records",
            url.pathname.slice(1),
          );
          assert.ok(Number(keys) >= 2, keys);
          // The database refuses the role from now on: the server is no longer ready.
          await cluster.superuser(
            `ALTER ROLE ${cluster.user} NOLOGIN; SELECT pg_terminate_backend(pid) ` +
              `FROM pg_stat_activity WHERE usename = '${cluster.user}';`,
          );
          try {
            const down = await fetch(`http://127.0.0.1:${admin}/ready`);
            assert.deepEqual([down.status, await down.json()], [503, {
              ready: false,
              reason: "the store does not answer",
            }]);
            // A request that needs the store is told to come back: a 503 with Retry-After, no
            // stack trace, no password.
            const refused = await fetch(`${origins.VESTIBULE_AUTH_URL}/api/auth/oauth2/register`, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/cb"] }),
            });
            const text = await refused.text();
            assert.deepEqual([refused.status, refused.headers.get("Retry-After")], [503, "5"]);
            assert.doesNotMatch(text, /at .*\.ts:|Error:|password/);
          } finally {
            await cluster.superuser(`ALTER ROLE ${cluster.user} LOGIN;`);
          }
          // The pool reconnects once the database takes the role again.
          const back = await fetch(`http://127.0.0.1:${admin}/ready`);
          assert.deepEqual([back.status, await back.json()], [200, { ready: true }]);
        });
      },
    );

    await t.step("a wrong password stops start-up with one line without it (exit 2)", async () => {
      const url = new URL(await cluster.database());
      url.password = "wrong-Secret-4711";
      const outcome = await startup(
        mainCommand(flags, { ...originsEnv(), VESTIBULE_DATA: url.href }, { cwd: dir }),
      );
      assert.equal(outcome.code, 2);
      assert.ok(!outcome.listened);
      assert.equal(
        outcome.stderr,
        `vestibule: cannot open VESTIBULE_DATA="postgres://vestibule:***@127.0.0.1:${cluster.port}` +
          `${url.pathname}": password authentication failed for user "vestibule" (SQLSTATE 28P01)\n`,
      );
      assert.ok(!(outcome.stdout + outcome.stderr).includes("wrong-Secret-4711"));
    });

    await t.step("an unreachable database stops start-up with one line (exit 2)", async () => {
      const [closed] = freePorts(1);
      const outcome = await startup(mainCommand(flags, {
        ...originsEnv(),
        VESTIBULE_DATA: `postgresql://vestibule:Secret-4711@127.0.0.1:${closed}/vestibule`,
      }, { cwd: dir }));
      assert.equal(outcome.code, 2);
      assert.equal(
        outcome.stderr,
        `vestibule: cannot open VESTIBULE_DATA="postgresql://vestibule:***@127.0.0.1:${closed}` +
          `/vestibule": connect ECONNREFUSED 127.0.0.1:${closed}\n`,
      );
      assert.ok(!(outcome.stdout + outcome.stderr).includes("Secret-4711"));
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
    await cluster.stop();
  }
});
