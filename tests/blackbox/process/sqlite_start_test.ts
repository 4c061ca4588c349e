// The real entry point with exactly the permissions of `deno task start` on an SQLite store: the
// file under ./data is all it needs (node:sqlite wants no --allow-ffi).
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { copyProject, mainCommand, originsEnv, startTaskFlags } from "../support/main_process.ts";

Deno.test("`deno task start` flags: VESTIBULE_DATA=./data/….sqlite serves from an owner-only SQLite file, stops on SIGTERM", async () => {
  const dir = await copyProject();
  const env = originsEnv();
  const flags = await startTaskFlags();
  const child = mainCommand(
    flags,
    { ...env, VESTIBULE_DATA: "./data/vestibule.sqlite", VESTIBULE_MAIL: "log" },
    { cwd: dir },
  ).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  try {
    while (!output.includes('"message":"listening"')) {
      const { value, done } = await stdout.read();
      if (done) break;
      output += value;
    }
    assert.ok(output.includes('"message":"listening"'), output);
    const jwks = await fetch(`${env.VESTIBULE_AUTH_URL}/api/auth/jwks`);
    assert.equal(jwks.status, 200);
    const { keys } = await jwks.json();
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);

    // The signing key the server made at start-up is in the SQLite file, and nowhere else.
    const path = `${dir}/data/vestibule.sqlite`;
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const rows = db.prepare("SELECT count(*) AS n FROM vestibule_records").get() as { n: number };
      assert.ok(rows.n > 0 && keys.length > 0, `${rows.n} records, ${keys.length} keys`);
    } finally {
      db.close();
    }
    assert.deepEqual(
      [...Deno.readDirSync(`${dir}/data`)].map((e) => e.name).filter((n) => n.endsWith(".kv")),
      [],
    );
  } finally {
    await stdout.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
