import assert from "node:assert/strict";
import { createOutbox } from "../../src/outbox/outbox.ts";
import { LEASE_MS } from "../../src/outbox/delivery.ts";
import { createSender, DeliveryError } from "../../src/outbox/sender.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { type Store, StoreUnavailableError } from "../../src/store/store.ts";

async function fixture(handler: () => Promise<void>, wrap: (s: Store) => Store = (s) => s) {
  let time = 1_800_000_000_000;
  const clock = { now: () => time, advance: (ms: number) => void (time += ms) };
  const kv = await openKvStore(":memory:", clock.now);
  const store = wrap(kv);
  const outbox = createOutbox({ store, now: clock.now });
  const logs: Record<string, unknown>[] = [];
  let calls = 0;
  const sender = createSender({
    outbox,
    handlers: { mail: () => (calls++, handler()) },
    log: (line) => logs.push(JSON.parse(line)),
    now: clock.now,
  });
  const add = async () => {
    const { delivery, mutations } = outbox.record({ kind: "mail", payload: {}, label: "x: y" });
    await kv.commit([], mutations);
    return delivery;
  };
  return { clock, outbox, sender, logs, add, calls: () => calls, close: () => kv.close() };
}

Deno.test("the sender retries a transient failure when it is due, and sends once", async () => {
  let up = false;
  const f = await fixture(() => up ? Promise.resolve() : Promise.reject(new Error("ECONNREFUSED")));
  try {
    const recorded = await f.add();
    const id = recorded.id;
    assert.equal(await f.sender.deliverNow(recorded), "pending");
    assert.equal(f.logs.length, 1);
    assert.equal(f.logs[0]!.message, "delivery failed, will retry");
    assert.equal(f.logs[0]!.retryInSeconds, 5);
    up = true;
    await f.sender.deliverDue();
    assert.equal(f.calls(), 1, "not due yet");
    f.clock.advance(5_000);
    await f.sender.deliverDue();
    await f.sender.deliverDue();
    assert.equal(f.calls(), 2);
    assert.equal((await f.outbox.get(id))?.state, "sent");
  } finally {
    f.close();
  }
});

Deno.test("a permanent refusal is not retried and is logged once", async () => {
  const f = await fixture(() => Promise.reject(new DeliveryError("550 no such user", true)));
  try {
    assert.equal(await f.sender.deliverNow(await f.add()), "failed");
    f.clock.advance(60 * 60 * 1000);
    await f.sender.deliverDue();
    assert.equal(f.calls(), 1);
    assert.deepEqual(f.logs.map((l) => [l.level, l.message, l.error]), [
      ["warn", "delivery failed, not retried", "550 no such user"],
    ]);
  } finally {
    f.close();
  }
});

Deno.test("a store error is logged, never thrown, and the loop stops cleanly", async () => {
  const f = await fixture(
    () => Promise.resolve(),
    (s) => ({
      ...s,
      list: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error("disk gone")) }),
      }),
    }),
  );
  try {
    await f.sender.deliverDue();
    await f.sender.start();
    await f.sender.stop();
    assert.ok(f.logs.length >= 1);
    assert.ok(f.logs.every((l) => l.level === "error" && l.message === "outbox error"));
  } finally {
    f.close();
  }
});

Deno.test("a store outage is one warning without a stack, not an outbox error", async () => {
  const f = await fixture(
    () => Promise.resolve(),
    (s) => ({
      ...s,
      list: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () =>
            Promise.reject(new StoreUnavailableError("the store did not answer within 5 s")),
        }),
      }),
    }),
  );
  try {
    await f.sender.deliverDue();
    assert.ok(f.logs.length >= 1);
    for (const line of f.logs) {
      assert.deepEqual([line.level, line.message, line.during, line.stack], [
        "warn",
        "store unavailable",
        "outbox",
        undefined,
      ]);
    }
  } finally {
    f.close();
  }
});

Deno.test("a queue held up by a failing delivery goes out whole and in order once it succeeds", async () => {
  let time = 1_800_000_000_000;
  const now = () => time;
  const store = await openKvStore(":memory:", now);
  try {
    const outbox = createOutbox({ store, now });
    let up = false;
    const sent: string[] = [];
    const sender = createSender({
      outbox,
      handlers: {
        webhook: (d) =>
          up ? Promise.resolve(void sent.push(d.label)) : Promise.reject(new Error("503")),
      },
      log: () => {},
      now,
    });
    for (const label of ["1", "2", "3"]) {
      const r = await outbox.recordInQueue("b1", [{ kind: "webhook", payload: {}, label }]);
      assert.ok(await store.commit(r.checks, r.mutations));
    }
    await sender.deliverDue();
    assert.deepEqual((await outbox.list()).map((d) => [d.label, d.attempts]).sort(), [
      ["1", 1],
      ["2", 0],
      ["3", 0],
    ]);
    assert.equal(await outbox.nextDueAt(), time + 5_000, "only the first is waited for");
    up = true;
    time += 5_000;
    await sender.deliverDue();
    assert.deepEqual(sent, ["1", "2", "3"]);
  } finally {
    store.close();
  }
});

Deno.test("an events endpoint that does not answer holds up no mail", async () => {
  let time = 1_800_000_000_000;
  const now = () => time;
  const store = await openKvStore(":memory:", now);
  try {
    const outbox = createOutbox({ store, now });
    const answer = Promise.withResolvers<void>();
    const mailSent = Promise.withResolvers<string>();
    const sender = createSender({
      outbox,
      handlers: {
        webhook: () => answer.promise,
        mail: (d) => Promise.resolve(mailSent.resolve(d.label)),
      },
      log: () => {},
      now,
    });
    const event = await outbox.recordInQueue("b1", [{ kind: "webhook", payload: {}, label: "e" }]);
    assert.ok(await store.commit(event.checks, event.mutations));
    // A mail whose recorder died: due once its claim lapses, recorded after the event.
    time += 1;
    const mail = outbox.record({ kind: "mail", payload: {}, label: "a@example.com: Sign in" });
    assert.ok(await store.commit([], mail.mutations));
    time += LEASE_MS;
    const pass = sender.deliverDue();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("the mail waited for the event"), 10_000);
    });
    assert.equal(await Promise.race([mailSent.promise, stuck]), "a@example.com: Sign in");
    clearTimeout(timer);
    answer.resolve();
    await pass;
    assert.equal((await outbox.get(event.deliveries[0]!.id))?.state, "sent");
  } finally {
    store.close();
  }
});
