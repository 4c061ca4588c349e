// Issue 23: the sender finds what is due from an index of unfinished deliveries, so what is
// finished is never read and a delivery costs the same whatever the backlog; queues take turns;
// a mail whose link died unsent is reported; deliveries an older release wrote still go.
import assert from "node:assert/strict";
import { createOutbox } from "../../src/outbox/outbox.ts";
import { LINK_EXPIRED } from "../../src/outbox/delivery.ts";
import { createSender, type DeliveryHandler } from "../../src/outbox/sender.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { openPgStore } from "../../src/store/pg_store.ts";
import { openSqliteStore } from "../../src/store/sqlite_store.ts";
import { prepareSchema, SCHEMA_KEY } from "../../src/schema.ts";
import type { Key, Store } from "../../src/store/store.ts";
import { startPgCluster } from "../../testkit/pg_cluster.ts";

/** A store that counts the entries its listings yield, by the prefix listed. */
function countingReads(store: Store) {
  const read = new Map<string, number>();
  const counted: Store = {
    ...store,
    get: (key) => store.get(key),
    set: (key, value, options) => store.set(key, value, options),
    delete: (key) => store.delete(key),
    commit: (checks, mutations) => store.commit(checks, mutations),
    snapshot: (prefix) => store.snapshot(prefix),
    close: () => store.close(),
    async *list<T>(prefix: Key, options?: { readonly limit?: number }) {
      const name = prefix.slice(0, 2).join("/");
      for await (const entry of store.list<T>(prefix, options)) {
        read.set(name, (read.get(name) ?? 0) + 1);
        yield entry;
      }
    },
  };
  return { store: counted, read, total: () => [...read.values()].reduce((a, b) => a + b, 0) };
}

async function fixture(handlers: Readonly<Record<string, DeliveryHandler>>) {
  let time = 1_800_000_000_000;
  const clock = { now: () => time, advance: (ms: number) => void (time += ms) };
  const kv = await openKvStore(":memory:", clock.now);
  const counting = countingReads(kv);
  const outbox = createOutbox({ store: counting.store, now: clock.now });
  const logs: Record<string, unknown>[] = [];
  const sender = createSender({
    outbox,
    handlers,
    log: (line) => logs.push(JSON.parse(line)),
    now: clock.now,
  });
  const queue = async (name: string, count: number) => {
    for (let done = 0; done < count; done += 250) {
      const recording = await outbox.recordInQueue(
        name,
        Array.from({ length: Math.min(250, count - done) }, (_, i) => ({
          kind: "webhook",
          payload: {},
          label: `${name} ${done + i}`,
        })),
      );
      assert.ok(await kv.commit(recording.checks, recording.mutations));
    }
  };
  return { clock, kv, outbox, sender, logs, queue, counting, [Symbol.dispose]: () => kv.close() };
}

Deno.test("finding what is due reads no finished delivery, and a delivery costs the same with a backlog 10 times longer", async () => {
  const perDelivery: number[] = [];
  for (const backlog of [40, 400]) {
    let delivered = 0;
    using f = await fixture({ webhook: () => Promise.resolve(void delivered++) });
    // A week of finished deliveries, kept for the listing.
    await f.queue("events/old", 300);
    await f.sender.deliverDue();
    await f.queue("events/b1", backlog);
    f.counting.read.clear();
    delivered = 0;
    await f.sender.deliverDue();
    assert.equal(delivered, backlog);
    assert.equal(f.counting.read.get("outbox/delivery"), undefined, "no delivery listed");
    perDelivery.push(f.counting.total() / backlog);
  }
  assert.ok(perDelivery[1]! <= perDelivery[0]! * 1.1, `entries read per delivery: ${perDelivery}`);
  assert.ok(perDelivery[1]! < 6, `entries read per delivery: ${perDelivery}`);
});

Deno.test("one business's queue does not hold up another's: their heads go side by side", async () => {
  const order: string[] = [];
  const otherSent = Promise.withResolvers<void>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = new Promise<void>((resolve) => timer = setTimeout(resolve, 2_000));
  using f = await fixture({
    webhook: async (d) => {
      // The long queue's first event answers only once the other business's event arrived.
      if (d.label === "events/long 0") await Promise.race([otherSent.promise, held]);
      order.push(d.label);
      if (d.label === "events/other 0") otherSent.resolve();
    },
  });
  try {
    await f.queue("events/long", 100);
    f.clock.advance(1);
    await f.queue("events/other", 1);
    await f.sender.deliverDue();
    assert.equal(order.length, 101);
    assert.equal(order[0], "events/other 0", "it did not wait behind the long queue");
    assert.deepEqual(order.filter((l) => l.startsWith("events/long")), [
      ...Array.from({ length: 100 }, (_, i) => `events/long ${i}`),
    ], "each queue in its order");
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("a mail whose link expired before its retry is recorded failed with the reason and a warning, not dropped", async () => {
  const calls: number[] = [];
  using f = await fixture({
    mail: () => (calls.push(f.clock.now()), Promise.reject(new Error("451 try later"))),
  });
  const expiresAt = f.clock.now() + 15 * 60 * 1000;
  const { delivery, mutations } = f.outbox.record({
    kind: "mail",
    payload: { link: "https://auth.example/link" },
    label: "a@example.com: Sign in",
    expiresAt,
  });
  assert.ok(await f.kv.commit([], mutations));
  assert.equal(await f.sender.deliverNow(delivery), "pending");
  // The mail server stays away past the link's life; the retries back off to 5 minutes.
  for (let minutes = 0; minutes < 16; minutes++) {
    f.clock.advance(60 * 1000);
    await f.sender.deliverDue();
  }
  const failed = await f.outbox.get(delivery.id);
  assert.equal(failed?.state, "failed");
  assert.equal(failed?.lastError, LINK_EXPIRED);
  assert.deepEqual((await f.outbox.list(["failed"])).map((d) => d.label), [
    "a@example.com: Sign in",
  ]);
  const warning = f.logs.at(-1)!;
  assert.equal(warning.level, "warn");
  assert.equal(warning.message, "delivery given up: its link expired before it could be sent");
  assert.equal(warning.error, LINK_EXPIRED);
  assert.ok(!JSON.stringify(f.logs).includes("auth.example"), "no link in the log");
  assert.ok(calls.length > 1 && calls.every((at) => at < expiresAt), "never tried once it died");
});

Deno.test("deliveries an older release wrote (no due index) go out after the upgrade, a queue in its order", async () => {
  const sent: string[] = [];
  using f = await fixture({
    mail: (d) => Promise.resolve(void sent.push(d.label)),
    webhook: (d) => Promise.resolve(void sent.push(d.label)),
  });
  const at = f.clock.now();
  const old = (id: string, label: string, extra: Record<string, unknown>) => ({
    id,
    kind: extra.queue ? "webhook" : "mail",
    payload: {},
    label,
    state: "pending",
    attempts: 1,
    createdAt: at,
    nextAttemptAt: at,
    claim: null,
    expiresAt: null,
    lastError: "ECONNREFUSED",
    reportTo: null,
    ...extra,
  });
  // As version 4 wrote them: the deliveries, a queue's index and counter, no due entries.
  await f.kv.commit([], [
    { type: "set", key: ["outbox", "delivery", "m1"], value: old("m1", "mail", {}) },
    ...[0, 1].flatMap((sequence) => [
      {
        type: "set" as const,
        key: ["outbox", "delivery", `e${sequence}`],
        value: old(`e${sequence}`, `event ${sequence}`, { queue: { name: "q", sequence } }),
      },
      { type: "set" as const, key: ["outbox", "queue", "q", sequence], value: `e${sequence}` },
    ]),
    { type: "set", key: ["outbox", "sequence", "q"], value: 2 },
    { type: "set", key: SCHEMA_KEY, value: { version: 4 } },
  ]);
  await prepareSchema(f.kv, f.clock.now);
  await f.sender.deliverDue();
  assert.deepEqual(sent.sort(), ["event 0", "event 1", "mail"]);
  assert.deepEqual(sent.filter((l) => l.startsWith("event")), ["event 0", "event 1"]);
});

/**
 * Two senders, each on its own store (two pools, two connections to one file), drain two queues
 * and a mail recorded through `stores[0]`: each delivery once, each queue in order.
 */
async function twoSendersDrain(stores: readonly [Store, Store]) {
  const store = stores[0];
  const outbox = createOutbox({ store, now: Date.now });
  const sent: string[] = [];
  const senders = stores.map((own) =>
    createSender({
      outbox: createOutbox({ store: own, now: Date.now }),
      handlers: {
        mail: (d) => Promise.resolve(void sent.push(d.label)),
        webhook: (d) => Promise.resolve(void sent.push(d.label)),
      },
      log: () => {},
      now: Date.now,
    })
  );
  for (const name of ["a", "b"]) {
    const recording = await outbox.recordInQueue(
      name,
      Array.from(
        { length: 30 },
        (_, i) => ({ kind: "webhook", payload: {}, label: `${name}${i}` }),
      ),
    );
    assert.ok(await store.commit(recording.checks, recording.mutations));
  }
  // A mail whose recorder died: due once its claim lapses (its lease is in the past here).
  const mail = createOutbox({ store, now: () => Date.now() - 3 * 60 * 1000 })
    .record({ kind: "mail", payload: {}, label: "mail" });
  assert.ok(await store.commit([], mail.mutations));
  await Promise.all(senders.map((sender) => sender.deliverDue()));
  assert.equal(sent.length, 61, sent.join(" "));
  assert.equal(new Set(sent).size, 61, "each once");
  for (const name of ["a", "b"]) {
    assert.deepEqual(
      sent.filter((l) => l.startsWith(name)),
      Array.from({ length: 30 }, (_, i) => `${name}${i}`),
    );
  }
  assert.equal(await outbox.nextDueAt(), null, "nothing left in the due index");
}

Deno.test("on PostgreSQL, two senders drain two queues and a mail side by side: each once, each queue in order", async () => {
  const cluster = await startPgCluster();
  const url = await cluster.database();
  const stores = await Promise.all([0, 1].map(() => openPgStore({ url, poolSize: 4 })));
  try {
    await twoSendersDrain([stores[0]!, stores[1]!]);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await cluster.stop();
  }
});

Deno.test("on SQLite, two senders on one file drain two queues and a mail side by side: each once, each queue in order", async () => {
  const dir = await Deno.makeTempDir();
  const stores = await Promise.all([0, 1].map(() => openSqliteStore(`${dir}/outbox.sqlite`)));
  try {
    await twoSendersDrain([stores[0]!, stores[1]!]);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await Deno.remove(dir, { recursive: true });
  }
});
