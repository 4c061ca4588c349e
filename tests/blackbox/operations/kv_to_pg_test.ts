// Moving a Deno KV deployment to PostgreSQL, as docs/operating.md tells an operator: `deno task admin
// export` from the KV file and `deno task admin import` into the database, both real processes
// with the admin task's permissions. Every record arrives (accounts, clients, grants, refresh
// tokens, signing keys, audit log), and a server on the database serves the same JWKS, accepts
// the access token and refreshes the refresh token issued on KV.
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { openPgStore } from "../../../src/store/pg_store.ts";
import type { StoredRecord } from "../../../src/store/store.ts";
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { manualClock } from "../../store/store_contract.ts";
import { adminProcess, copyProject } from "../support/main_process.ts";
import { assertHonoured, handOut, oauthFixture } from "../support/oauth_helpers.ts";
import { denoOnly } from "../support/server_runtime.ts";

Deno.test("a KV deployment moves to PostgreSQL with admin export and import, nothing lost", {
  ignore: denoOnly("serves a Deno KV store the test opened"),
}, async () => {
  const cluster = await startPgCluster();
  const dir = await copyProject();
  const admin = await adminProcess(dir);
  // The import sets each record's expiry again from its own clock: a millisecond or so later.
  const sameRecords = (actual: StoredRecord[], expected: StoredRecord[]) => {
    const strip = (records: StoredRecord[]) =>
      records.map(({ version: _, expiresAt: __, ...record }) => record);
    assert.deepEqual(strip(actual), strip(expected));
    actual.forEach((record, i) => {
      const want = expected[i]!.expiresAt;
      if (want === null) assert.equal(record.expiresAt, null);
      else assert.ok(Math.abs(record.expiresAt! - want) < 1_000, JSON.stringify(record.key));
    });
  };
  const clock = manualClock(Date.now());
  try {
    // The KV deployment: an owner, a client with a grant and tokens, an operator's business.
    const kvPath = `${dir}/data/vestibule.kv`;
    const kv = await openKvStore(kvPath, clock.now);
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
    const url = await cluster.database();
    const imported = await admin({ VESTIBULE_DATA: url }, ["import"], exported.stdout);
    assert.equal(imported.code, 0, imported.stderr);
    assert.equal(JSON.parse(imported.stdout).skippedExpired, 0);

    const before = await openKvStore(kvPath, clock.now);
    const pg = await openPgStore({ url, poolSize: 4, now: clock.now });
    try {
      const kvRecords = await before.snapshot();
      sameRecords(await pg.snapshot(), kvRecords);
      const kinds = new Set(kvRecords.map((r) => r.key.slice(0, 2).join("/")));
      for (
        const kind of [
          "accounts/account",
          "accounts/business",
          "accounts/session",
          "audit/" + business,
          "oauth/client",
          "oauth/grant",
          "oauth/refresh",
          "oauth/signing_key",
          "outbox/delivery",
        ]
      ) assert.ok(kinds.has(kind), `${kind} among ${[...kinds].join(" ")}`);
    } finally {
      await before.close();
    }

    const b = await oauthFixture(handed.origins, { store: pg, clock });
    try {
      await assertHonoured(b, handed);
      const audit = await adminRunner(pg, { now: clock.now })("audit-log", "--business", business);
      assert.equal(audit.code, 0, audit.err);
      assert.match(audit.out, /created the business with second@example\.com as owner/);
    } finally {
      await b.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await cluster.stop();
  }
});
