// Moving a Deno KV deployment to the SQLite store and back, as docs/operating.md tells an
// operator: `deno task admin export` from one file and `deno task admin import` into the other,
// real processes with the admin task's permissions (read and write of ./data, nothing more).
// Every record arrives, a server on the SQLite file serves the same JWKS, accepts the access
// token and refreshes the refresh token issued on KV, and the way back gives the same records.
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { openSqliteStore } from "../../../src/store/sqlite_store.ts";
import type { StoredRecord } from "../../../src/store/store.ts";
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import { manualClock } from "../../store/store_contract.ts";
import { adminProcess, copyProject } from "../support/main_process.ts";
import { assertHonoured, handOut, oauthFixture } from "../support/oauth_helpers.ts";
import { denoOnly } from "../support/server_runtime.ts";

/** The same records; an import sets each expiry again from its own clock, a moment later. */
function assertSameRecords(actual: StoredRecord[], expected: StoredRecord[]) {
  const strip = (records: StoredRecord[]) =>
    records.map(({ version: _, expiresAt: __, ...record }) => record);
  assert.deepEqual(strip(actual), strip(expected));
  actual.forEach((record, i) => {
    const want = expected[i]!.expiresAt;
    if (want === null) assert.equal(record.expiresAt, null);
    else assert.ok(Math.abs(record.expiresAt! - want) < 1_000, JSON.stringify(record.key));
  });
}

Deno.test("a KV deployment moves to SQLite and back with admin export and import, nothing lost", {
  ignore: denoOnly("serves a Deno KV store the test opened"),
}, async () => {
  const dir = await copyProject();
  const admin = await adminProcess(dir);
  const clock = manualClock(Date.now());
  try {
    const kv = await openKvStore(`${dir}/data/vestibule.kv`, clock.now);
    const a = await oauthFixture({}, { store: kv, clock });
    let handed, business;
    try {
      handed = await handOut(a);
      const created = await adminRunner(kv, { now: clock.now })(
        "create-business",
        "--owner",
        "second@example.com",
        "--name",
        "Second Shop",
      );
      assert.equal(created.code, 0, created.err);
      business = JSON.parse(created.out).business.id as string;
    } finally {
      await a.close(); // the server stops, and closes the KV store
    }

    const exported = await admin({ VESTIBULE_DATA: "./data/vestibule.kv" }, ["export"]);
    assert.equal(exported.code, 0, exported.stderr);
    const imported = await admin(
      { VESTIBULE_DATA: "./data/vestibule.sqlite" },
      ["import"],
      exported.stdout,
    );
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(JSON.parse(imported.stdout).skippedExpired, 0);

    const kvRecords = await (async () => {
      const before = await openKvStore(`${dir}/data/vestibule.kv`, clock.now);
      try {
        return await before.snapshot();
      } finally {
        await before.close();
      }
    })();
    const kinds = new Set(kvRecords.map((r) => r.key.slice(0, 2).join("/")));
    for (
      const kind of ["accounts/business", "audit/" + business, "oauth/refresh", "oauth/signing_key"]
    ) assert.ok(kinds.has(kind), `${kind} among ${[...kinds].join(" ")}`);

    const sqlite = await openSqliteStore(`${dir}/data/vestibule.sqlite`, clock.now);
    assertSameRecords(await sqlite.snapshot(), kvRecords);
    const b = await oauthFixture(handed.origins, { store: sqlite, clock });
    try {
      await assertHonoured(b, handed);
      const audit = await adminRunner(sqlite, { now: clock.now })(
        "audit-log",
        "--business",
        business,
      );
      assert.equal(audit.code, 0, audit.err);
      assert.match(audit.out, /created the business with second@example\.com as owner/);
    } finally {
      await b.close(); // closes the SQLite store
    }

    // And back: the SQLite file's backup loads into a new KV file, record for record.
    const again = await admin({ VESTIBULE_DATA: "./data/vestibule.sqlite" }, ["export"]);
    assert.equal(again.code, 0, again.stderr);
    const back = await admin({ VESTIBULE_DATA: "./data/back.kv" }, ["import"], again.stdout);
    assert.equal(back.code, 0, back.stderr);
    const [fromSqlite, backInKv] = await Promise.all([
      openSqliteStore(`${dir}/data/vestibule.sqlite`, clock.now),
      openKvStore(`${dir}/data/back.kv`, clock.now),
    ]);
    try {
      assertSameRecords(await backInKv.snapshot(), await fromSqlite.snapshot());
    } finally {
      await Promise.all([fromSqlite.close(), backInKv.close()]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
