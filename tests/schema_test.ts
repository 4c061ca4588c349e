import assert from "node:assert/strict";
import { createAccounts } from "../src/accounts/accounts.ts";
import { cookieName } from "../src/accounts/cookies.ts";
import { createSessions, SESSION_LIFETIME_MS } from "../src/accounts/sessions.ts";
import { resolveConfig } from "../src/config/config.ts";
import { sha256 } from "../src/secrets.ts";
import { openKvStore } from "../src/store/kv_store.ts";
import {
  CURRENT_SCHEMA,
  MIGRATIONS,
  prepareSchema,
  readSchemaVersion,
  SCHEMA_KEY,
  SchemaError,
} from "../src/schema.ts";
import type { Store } from "../src/store/store.ts";
import { countPendingGates } from "../src/workspace/domain/gate_record.ts";
import * as v from "valibot";
import {
  InvoiceSchema,
  PackSchema,
  RunSchema,
  SubscriptionSchema,
  TriggerSchema,
  WorkflowSchema,
} from "../src/workspace/domain/records.ts";
import { manualClock } from "./store/store_contract.ts";

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
    const cookie = `${cookieName(config, "vestibule_session")}=${raw}`;
    const request = new Request(`${config.authUrl}/account`, { headers: { Cookie: cookie } });
    assert.equal(await sessions.current(request), null, "the old key is not found as it is");

    const applied = await prepareSchema(store, clock.now);
    assert.deepEqual(applied.map((m) => m.to), [2, 3, 4, 5]);
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
    assert.deepEqual((await prepareSchema(racing, Date.now)).map((m) => m.to), [3, 4, 5]);
    assert.equal(await countPendingGates(store), 1);
    assert.deepEqual((await store.get(["gate_pending", "g1"]))?.value, "b1");
    await MIGRATIONS[1]!.run(store, Date.now);
    assert.equal(await countPendingGates(store), 1, "a second run changes nothing");
  } finally {
    store.close();
  }
});

Deno.test("version 4: records written before it gain updatedAt (runs result and costCents), once", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const upgradedAt = clock.now();
    // What a version 2 store holds.
    await store.set(SCHEMA_KEY, { version: 3 });
    const b = "biz-1";
    const old = {
      workflow: {
        id: "wf",
        name: "W",
        description: "",
        kind: "paid",
        costPerRunCents: 40,
        status: "active",
      },
      run: {
        id: "r1",
        workflowId: "wf",
        status: "succeeded",
        startedAt: 1_000,
        finishedAt: 2_000,
        approvedBy: null,
        gateId: null,
      },
      queued: {
        id: "r2",
        workflowId: "wf",
        status: "queued",
        startedAt: 3_000,
        finishedAt: null,
        approvedBy: "a",
        gateId: "g",
      },
      trigger: { id: "t", name: "T", event: "order.created", workflowId: "wf", enabled: true },
      pack: {
        id: "p",
        name: "P",
        vertical: "v",
        enabled: true,
        version: "1",
        latestVersion: "1",
        settings: {},
      },
      invoice: {
        id: "i",
        number: "1",
        amountCents: 5,
        currency: "USD",
        status: "paid",
        issuedAt: 500,
      },
      subscription: {
        plan: "starter",
        status: "active",
        seats: 1,
        monthlyCents: 4_900,
        paymentMethod: null,
        usage: { runs: 0, includedRuns: 10 },
        renewsAt: null,
      },
    };
    await store.set(["ws", b, "workflow", "wf"], old.workflow);
    await store.set(["ws", b, "run", "r1"], old.run);
    await store.set(["ws", b, "run", "r2"], old.queued);
    await store.set(["ws", b, "trigger", "t"], old.trigger);
    await store.set(["ws", b, "pack", "p"], old.pack);
    await store.set(["ws", b, "invoice", "i"], old.invoice);
    await store.set(["ws", b, "subscription"], old.subscription);
    await store.set(["ws", b, "connection", "c"], { id: "c", updatedAt: 7 });

    clock.advance(60_000);
    const applied = await prepareSchema(store, clock.now);
    assert.deepEqual(applied.map((m) => m.to), [4, 5]);
    const read = async (key: string[]) => (await store.get<Record<string, unknown>>(key))!.value;
    const parsed = (schema: v.GenericSchema, value: unknown) => {
      const result = v.safeParse(schema, value);
      assert.ok(result.success, JSON.stringify(result.issues?.[0]));
      return result.output as Record<string, unknown>;
    };
    assert.deepEqual(parsed(RunSchema, await read(["ws", b, "run", "r1"])), {
      ...old.run,
      result: null,
      costCents: null,
      updatedAt: 2_000,
    });
    assert.equal((await read(["ws", b, "run", "r2"])).updatedAt, 3_000);
    assert.equal(parsed(InvoiceSchema, await read(["ws", b, "invoice", "i"])).updatedAt, 500);
    for (
      const [schema, key] of [
        [WorkflowSchema, ["ws", b, "workflow", "wf"]],
        [TriggerSchema, ["ws", b, "trigger", "t"]],
        [PackSchema, ["ws", b, "pack", "p"]],
        [SubscriptionSchema, ["ws", b, "subscription"]],
      ] as const
    ) assert.equal(parsed(schema, await read([...key])).updatedAt, upgradedAt + 60_000);
    assert.deepEqual(await read(["ws", b, "connection", "c"]), { id: "c", updatedAt: 7 });

    // Run again (a crash before the stamp): what it wrote stays as it is.
    clock.advance(60_000);
    await MIGRATIONS.find((m) => m.to === 4)!.run(store, clock.now);
    assert.equal((await read(["ws", b, "workflow", "wf"])).updatedAt, upgradedAt + 60_000);
  } finally {
    store.close();
  }
});
