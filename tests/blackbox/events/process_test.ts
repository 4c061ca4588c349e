import assert from "node:assert/strict";
import { mainCommand, originsEnv, startTaskFlags, startup } from "../support/main_process.ts";
import { refusedReadWords } from "../support/server_runtime.ts";

Deno.test("an events secret the start task cannot use stops start-up with one line naming it", async (t) => {
  const flags = await startTaskFlags();
  const dir = await Deno.makeTempDir();
  const file = `${dir}/webhook.secret`;
  await Deno.writeTextFile(file, `whsec_${btoa("k".repeat(32))}\n`, { mode: 0o644 });
  const env = {
    ...originsEnv(),
    VESTIBULE_DATA: ":memory:",
    VESTIBULE_WEBHOOK_URL: "http://127.0.0.1:9/events",
    VESTIBULE_WEBHOOK_SECRET_FILE: file,
  };
  try {
    await t.step("outside what the start task may read", async () => {
      const outcome = await startup(mainCommand(flags, env));
      assert.ok(!outcome.listened);
      assert.equal(outcome.code, 2);
      assert.match(
        outcome.stderr,
        new RegExp(
          `^vestibule: VESTIBULE_WEBHOOK_SECRET_FILE="${file}": ${
            refusedReadWords(file)
          }[^\\n]*\\n$`,
        ),
      );
    });
    await t.step("open to others", async () => {
      const outcome = await startup(mainCommand([...flags, `--allow-read=${dir}`], env));
      assert.equal(outcome.code, 2);
      assert.equal(
        outcome.stderr,
        `vestibule: VESTIBULE_WEBHOOK_SECRET_FILE="${file}": ${file} is open to group or others (mode 0644); make it owner-only: chmod 600 ${file}\n`,
      );
    });
    await t.step("owner-only: it starts and says where events go", async () => {
      await Deno.chmod(file, 0o600);
      const outcome = await startup(mainCommand([...flags, `--allow-read=${dir}`], env));
      assert.ok(outcome.listened, outcome.stderr);
      assert.match(outcome.stdout, /"events":"http:\/\/127\.0\.0\.1:9"/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
