// `deno task admin export` and `import` as real processes with the admin task's permissions:
// export through standard output while a server runs on the store, import from standard input
// into a new store, and a server on that store publishes the same keys.
import assert from "node:assert/strict";
import { CURRENT_SCHEMA, SCHEMA_KEY } from "../../../src/schema.ts";
import { adminProcess, copyProject, originsEnv, whileServing } from "../support/main_process.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

Deno.test("admin export while the server runs, import into a new store: the same JWKS; admin refuses a newer store", async () => {
  const dir = await copyProject();
  const admin = await adminProcess(dir);
  const origins = originsEnv();
  const jwks = () => fetch(`${origins.VESTIBULE_AUTH_URL}/api/auth/jwks`).then((r) => r.json());
  try {
    const { keys, backup } = await whileServing(dir, origins, async () => {
      const exported = await admin({}, ["export"]);
      assert.equal(exported.code, 0, exported.stderr);
      return { keys: await jwks(), backup: exported.stdout };
    });
    assert.ok(backup.startsWith(`{"vestibule":"backup","format":1,"schema":${CURRENT_SCHEMA},`));

    const restored = { VESTIBULE_DATA: storeFile("./data/restored") };
    const imported = await admin(restored, ["import"], backup);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(JSON.parse(imported.stdout).skippedExpired, 0);
    assert.deepEqual(await whileServing(dir, { ...origins, ...restored }, jwks), keys);

    const again = await admin(restored, ["import"], backup);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^vestibule admin import: the store is not empty/);

    // A store a newer release wrote: every command refuses it, in one line.
    const store = await openStoreFile(storeFile(`${dir}/data/restored`));
    await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA + 1 });
    await store.close();
    const newer = await admin(restored, ["list-clients"]);
    assert.equal(newer.code, 2);
    assert.match(
      newer.stderr,
      new RegExp(
        `^vestibule admin: VESTIBULE_DATA="${
          restored.VESTIBULE_DATA.replaceAll(".", "\\.")
        }": the store is at schema version \\d+, newer than this release knows \\(\\d+\\)[^\\n]*\\n$`,
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin import refuses a backup whose last record no store takes, in one line, and writes nothing", async () => {
  const dir = await copyProject();
  const admin = await adminProcess(dir);
  const backupOf = (records: string[]) =>
    [
      JSON.stringify({
        vestibule: "backup",
        format: 1,
        schema: CURRENT_SCHEMA,
        exportedAt: new Date().toISOString(),
        records: records.length + 2,
      }),
      JSON.stringify({
        key: ["meta", "schema"],
        value: { version: CURRENT_SCHEMA },
        expiresAt: null,
      }),
      JSON.stringify({ key: ["note", "first"], value: "kept", expiresAt: null }),
      ...records,
    ].join("\n") + "\n";
  const deep = 200_000;
  const cases = [
    {
      name: "a 70 KB value",
      line: JSON.stringify({ key: ["note", "big"], value: "x".repeat(70_000), expiresAt: null }),
      error:
        /^vestibule admin import: line 4 \(key \["note","big"\]\): the value is 700\d\d bytes stored, more than a store takes \(65536\)\n$/,
    },
    {
      name: "a 3,000-character key",
      line: JSON.stringify({ key: ["note", "k".repeat(3000)], value: 1, expiresAt: null }),
      error:
        /^vestibule admin import: line 4 \(key \["note","k{40}…"\]\): the key is 3008 bytes, more than a store takes \(2048\)\n$/,
    },
    {
      name: "a value nested 200,000 deep",
      line: `{"key":["note","deep"],"value":${"[".repeat(deep)}${
        "]".repeat(deep)
      },"expiresAt":null}`,
      error:
        /^vestibule admin import: line 4: the value nests more than 100 levels deep, more than a store takes\n$/,
    },
  ];
  try {
    for (const [i, { name, line, error }] of cases.entries()) {
      const store = { VESTIBULE_DATA: storeFile(`./data/refused-${i}`) };
      const refused = await admin(store, ["import"], backupOf([line]));
      assert.equal(refused.code, 1, name);
      assert.match(refused.stderr, error, `${name}: ${refused.stderr.slice(0, 500)}`);
      // Nothing was written: the same store takes a good backup next.
      const retried = await admin(store, ["import"], backupOf([]));
      assert.equal(retried.code, 0, `${name}: ${retried.stderr}`);
      assert.equal(JSON.parse(retried.stdout).imported, 2, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
