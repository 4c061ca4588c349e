import assert from "node:assert/strict";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { createSessions, SESSION_LIFETIME_MS } from "../../src/accounts/sessions.ts";
import { resolveConfig } from "../../src/config.ts";
import { sha256 } from "../../src/secrets.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import {
  CURRENT_SCHEMA,
  MIGRATIONS,
  prepareSchema,
  readSchemaVersion,
  SCHEMA_KEY,
  SchemaError,
} from "../../src/store/schema.ts";
import type { Store } from "../../src/store/store.ts";
import { countPendingGates } from "../../src/workspace/gates.ts";
import { manualClock } from "./store_contract.ts";

Deno.test("a fresh store is stamped with the current schema version", async () => {
  const store = await openKvStore(":memory:");
  try {
    assert.deepEqual(await prepareSchema(store, Date.now), []);
    assert.equal(await readSchemaVersion(store), CURRENT_SCHEMA);
  } finally {
    store.close();
  }
});

Deno.test("a store newer than this release is refused, untouched", async () => {
  const store = await openKvStore(":memory:");
  try {
    await store.set(SCHEMA_KEY, { version: CURRENT_SCHEMA + 1 });
    await assert.rejects(() => prepareSchema(store, Date.now), SchemaError);
    assert.equal(await readSchemaVersion(store), CURRENT_SCHEMA + 1);
  } finally {
    store.close();
  }
});

Deno.test("a session stored under hex SHA-256 (before version 2) still signs in after the migration", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
    const accounts = createAccounts(store, clock.now);
    const sessions = createSessions({ config, store, now: clock.now, accounts });
    const { account } = await accounts.createAccountWithBusiness("old@example.com", "Old");
    // What a store written before commit 766e93d holds: no version, the session under hex.
    const raw = "A".repeat(43);
    const hex = Array.from(await sha256(raw), (b) => b.toString(16).padStart(2, "0")).join("");
    const lifetimeLeft = SESSION_LIFETIME_MS - 60_000;
    await store.set(["accounts", "session", hex], {
      accountId: account.id,
      csrfSecret: "B".repeat(43),
      createdAt: clock.now(),
    }, { expireIn: lifetimeLeft });
    const cookie = `${config.authUrl.startsWith("https") ? "__Host-" : ""}vestibule_session=${raw}`;
    const request = new Request(`${config.authUrl}/account`, { headers: { Cookie: cookie } });
    assert.equal(await sessions.current(request), null, "the old key is not found as it is");

    const applied = await prepareSchema(store, clock.now);
    assert.deepEqual(applied.map((m) => m.to), [2, 3]);
    assert.equal(await readSchemaVersion(store), CURRENT_SCHEMA);
    assert.equal((await sessions.current(request))?.account.id, account.id);
    assert.equal(await store.get(["accounts", "session", hex]), null);

    // Run again (a crash before the stamp): nothing changes; the expiry was kept.
    await prepareSchema(store, clock.now);
    await MIGRATIONS[0]!.run(store, clock.now);
    assert.equal((await sessions.current(request))?.account.id, account.id);
    clock.advance(lifetimeLeft);
    assert.equal(await sessions.current(request), null, "expired when it would have");
  } finally {
    store.close();
  }
});

Deno.test("the migration does not bring back a session ended after it read the store", async () => {
  const store = await openKvStore(":memory:");
  try {
    const hex = "ab".repeat(32);
    await store.set(["accounts", "session", hex], { accountId: "a1" }, { expireIn: 60_000 });
    // An old process signs the session out between the migration's read and its write.
    const racing: Store = {
      ...store,
      async snapshot(prefix) {
        const records = await store.snapshot(prefix);
        await store.delete(["accounts", "session", hex]);
        return records;
      },
    };
    await MIGRATIONS[0]!.run(racing, Date.now);
    assert.deepEqual(await store.snapshot(["accounts"]), []);
  } finally {
    store.close();
  }
});

Deno.test("migration 3 marks the pending gates of an older store, once, and not one decided meanwhile", async () => {
  const store = await openKvStore(":memory:");
  try {
    // Gates as releases before version 3 wrote them: no pending mark.
    await store.set(["gate", "g1"], { id: "g1", businessId: "b1", status: "pending" });
    await store.set(["gate", "g2"], { id: "g2", businessId: "b1", status: "approved" });
    await store.set(["gate", "g3"], { id: "g3", businessId: "b2", status: "pending" });
    await store.set(SCHEMA_KEY, { version: 2 });
    assert.equal(await countPendingGates(store), 0);
    // g3 is declined by an old process between the migration's read and its write.
    const racing: Store = {
      ...store,
      async snapshot(prefix) {
        const records = await store.snapshot(prefix);
        await store.set(["gate", "g3"], { id: "g3", businessId: "b2", status: "declined" });
        return records;
      },
    };
    assert.deepEqual((await prepareSchema(racing, Date.now)).map((m) => m.to), [3]);
    assert.equal(await countPendingGates(store), 1);
    assert.deepEqual((await store.get(["gate_pending", "g1"]))?.value, "b1");
    await MIGRATIONS[1]!.run(store, Date.now);
    assert.equal(await countPendingGates(store), 1, "a second run changes nothing");
  } finally {
    store.close();
  }
});
