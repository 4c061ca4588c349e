// `deno task admin check --live` as a real process with the admin task's permissions, against
// main.ts serving from the same store; then a store a newer release wrote is a fault, exit 1.
import assert from "node:assert/strict";
import { CURRENT_SCHEMA, SCHEMA_KEY } from "../../../src/schema.ts";
import {
  copyProject,
  editPlaceholders,
  mainCommand,
  originsEnv,
  taskFlags,
  whileServing,
} from "../support/main_process.ts";
import { defaultStoreFile, openStoreFile } from "../support/server_runtime.ts";

Deno.test("admin check --live as a process: ok with the admin task's permissions; a newer store is a fault", async () => {
  const dir = await copyProject();
  await editPlaceholders(`${dir}/static`);
  const flags = await taskFlags("admin", "src/operator/cli/cli.ts");
  const origins = originsEnv();
  const check = async (...args: string[]) => {
    const output = await mainCommand(flags, origins, {
      cwd: dir,
      entry: "src/operator/cli/cli.ts",
      args: ["check", ...args],
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
  };
  try {
    const live = await whileServing(dir, origins, () => check("--live"));
    assert.equal(live.code, 0, live.stdout + live.stderr);
    const lines = live.stdout.trimEnd().split("\n");
    assert.ok(lines.length >= 15, live.stdout);
    assert.deepEqual(lines.filter((l) => !l.startsWith("ok ")), []);

    const store = await openStoreFile(defaultStoreFile(dir));
    await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA + 1 });
    await store.close();
    const newer = await check();
    assert.equal(newer.code, 1);
    assert.match(
      newer.stdout,
      new RegExp(`^fault the store is at schema version ${CURRENT_SCHEMA + 1}, newer`, "m"),
    );
    assert.equal(newer.stderr, "vestibule admin check: 1 fault\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
