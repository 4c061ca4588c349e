// Start-up and the store's schema version: a real start stamps a fresh store, and a store written
// by a newer release stops start-up with one line, before anything listens or is written.
import assert from "node:assert/strict";
import { CURRENT_SCHEMA, readSchemaVersion, SCHEMA_KEY } from "../../../src/schema.ts";
import {
  copyProject,
  mainCommand,
  originsEnv,
  startTaskFlags,
  startup,
} from "../support/main_process.ts";
import { defaultStoreFile, openStoreFile } from "../support/server_runtime.ts";

Deno.test("start-up stamps a fresh store and refuses one from a newer release", async (t) => {
  const flags = await startTaskFlags();
  const dir = await copyProject();
  const path = defaultStoreFile(dir);
  const start = () => mainCommand(flags, originsEnv(), { cwd: dir });
  try {
    await t.step("a fresh store is stamped", async () => {
      const outcome = await startup(start());
      assert.ok(outcome.listened, outcome.stderr);
      const store = await openStoreFile(path);
      try {
        assert.equal(await readSchemaVersion(store), CURRENT_SCHEMA);
      } finally {
        await store.close();
      }
    });
    await t.step(
      "an older store is migrated, and the log says so in a line like any other",
      async () => {
        const store = await openStoreFile(path);
        await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA - 1 });
        await store.close();
        const outcome = await startup(start());
        assert.ok(outcome.listened, outcome.stderr);
        const lines = outcome.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
        for (const line of lines) {
          assert.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, JSON.stringify(line));
          assert.ok(["info", "warn", "error"].includes(line.level), JSON.stringify(line));
        }
        const migrated = lines.find((line) => line.message === "store migrated");
        assert.equal(migrated?.to, CURRENT_SCHEMA, outcome.stdout);
        assert.equal(migrated?.level, "info");
      },
    );
    await t.step("a newer store is refused with one line", async () => {
      const store = await openStoreFile(path);
      await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA + 1 });
      await store.close();
      const outcome = await startup(start());
      assert.ok(!outcome.listened);
      assert.equal(outcome.code, 2);
      assert.equal(
        outcome.stderr,
        `vestibule: VESTIBULE_DATA="${defaultStoreFile(".")}": the store is at schema version ${
          CURRENT_SCHEMA + 1
        }, newer than this release knows (${CURRENT_SCHEMA}): run the release that wrote it, ` +
          "or restore a backup made for this one\n",
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
