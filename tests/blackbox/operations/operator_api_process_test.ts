// main.ts with the operator API, as `deno task start` runs it: a token file it cannot use stops
// start-up with one line; a good one, kept under ./data, turns the API on.
import assert from "node:assert/strict";
import { freePorts } from "../../../testkit/ports.ts";
import {
  copyProject,
  mainCommand,
  originsEnv,
  startTaskFlags,
  startup,
  whileServing,
} from "../support/main_process.ts";

const TOKEN = "t".repeat(43);

Deno.test("start-up: the operator token file is checked before anything listens", async (t) => {
  const dir = await copyProject();
  try {
    await Deno.mkdir(`${dir}/data`, { mode: 0o700 });
    const env = {
      ...originsEnv(),
      VESTIBULE_ADMIN_LISTEN: `127.0.0.1:${freePorts(1)[0]}`,
      VESTIBULE_ADMIN_TOKEN_FILE: "data/admin-token",
    };
    await t.step("a short token: exit 2, one line, the token not shown", async () => {
      await Deno.writeTextFile(`${dir}/data/admin-token`, "short\n", { mode: 0o600 });
      const outcome = await startup(mainCommand(await startTaskFlags(), env, { cwd: dir }));
      assert.equal(outcome.code, 2);
      assert.equal(outcome.listened, false);
      assert.equal(
        outcome.stderr,
        'vestibule: VESTIBULE_ADMIN_TOKEN_FILE="data/admin-token": the token must be at least ' +
          "32 characters (it has 5); make one with: openssl rand -base64 32\n",
      );
    });
    await t.step("a private file with a long token: the API answers with it", async () => {
      await Deno.writeTextFile(`${dir}/data/admin-token`, `${TOKEN}\n`, { mode: 0o600 });
      await whileServing(dir, env, async () => {
        const url = `http://${env.VESTIBULE_ADMIN_LISTEN}/v1/businesses/b/workflow-runs/r`;
        const without = await fetch(url);
        assert.equal(without.status, 401);
        await without.body?.cancel();
        const withToken = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
        assert.equal(withToken.status, 404);
        assert.deepEqual(await withToken.json(), {
          error: "not_found",
          message: 'no business "b"',
        });
      });
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
