import assert from "node:assert/strict";
import { createOutbox } from "../../src/outbox/outbox.ts";
import { GIVE_UP_AFTER_MS, LEASE_MS, MAX_RETRY_MS, retryDelay } from "../../src/outbox/delivery.ts";
import { openKvStore } from "../../src/store/kv_store.ts";

async function fixture() {
  let time = 1_800_000_000_000;
  const clock = { now: () => time, advance: (ms: number) => void (time += ms) };
  const store = await openKvStore(":memory:", clock.now);
  const outbox = createOutbox({ store, now: clock.now });
  const add = async (options: { expiresAt?: number; reportTo?: readonly string[] } = {}) => {
    const { delivery, mutations } = outbox.record({
      kind: "mail",
      payload: { secret: "link" },
      label: "a@example.com: Hello",
      ...options,
    });
    assert.ok(await store.commit([], mutations));
    return delivery;
  };
  return { clock, store, outbox, add, [Symbol.dispose]: () => store.close() };
}

Deno.test("a new delivery is its recorder's; once that claim lapses, one of racing senders wins", async () => {
  using f = await fixture();
  const { id } = await f.add();
  assert.equal(await f.outbox.claim(id), null, "the recorder holds it");
  f.clock.advance(LEASE_MS);
  const claims = await Promise.all([f.outbox.claim(id), f.outbox.claim(id), f.outbox.claim(id)]);
  assert.equal(claims.filter((c) => c !== null).length, 1);
  assert.equal((await f.outbox.get(id))?.state, "sending");
});

Deno.test("a lapsed claim is taken over, and the first claimer's late outcome is ignored", async () => {
  using f = await fixture();
  const first = await f.add();
  const id = first.id;
  f.clock.advance(LEASE_MS - 1);
  assert.equal(await f.outbox.claim(id), null, "still held");
  f.clock.advance(1);
  const second = (await f.outbox.claim(id))!;
  assert.equal(second.attempts, 2);
  assert.equal(await f.outbox.finish(first, { kind: "sent" }), null);
  assert.equal((await f.outbox.finish(second, { kind: "sent" }))?.state, "sent");
});

Deno.test("transient failures back off from 5 seconds, doubling, capped at 5 minutes", async () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelay), [
    5_000,
    10_000,
    20_000,
    40_000,
    80_000,
    160_000,
    MAX_RETRY_MS,
    MAX_RETRY_MS,
  ]);
  using f = await fixture();
  const claimed = await f.add();
  const id = claimed.id;
  const next = await f.outbox.finish(claimed, { kind: "retry", error: "ECONNREFUSED" });
  assert.equal(next?.state, "pending");
  assert.equal(next?.nextAttemptAt, f.clock.now() + 5_000);
  assert.equal(await f.outbox.claim(id), null, "not due yet");
  f.clock.advance(5_000);
  assert.ok(await f.outbox.claim(id), "due again");
});

Deno.test("a permanent failure ends in failed; the admin's retry makes it due again", async () => {
  using f = await fixture();
  const claimed = await f.add();
  const id = claimed.id;
  const failed = await f.outbox.finish(claimed, { kind: "failed", error: "550 no such user" });
  assert.equal(failed?.state, "failed");
  f.clock.advance(GIVE_UP_AFTER_MS);
  assert.equal(await f.outbox.claim(id), null, "never retried by itself");
  assert.deepEqual((await f.outbox.list(["failed"])).map((d) => d.label), [
    "a@example.com: Hello",
  ]);
  assert.equal((await f.outbox.retryNow(id))?.state, "pending");
  assert.ok(await f.outbox.claim(id));
});

Deno.test("a delivery whose link has expired is due at once, not at its later retry, and kept until reported", async () => {
  using f = await fixture();
  const claimed = await f.add({ expiresAt: f.clock.now() + 6_000 });
  const id = claimed.id;
  const retrying = await f.outbox.finish(claimed, { kind: "retry", error: "timeout" });
  assert.equal(retrying?.nextAttemptAt, f.clock.now() + 5_000);
  f.clock.advance(5_500);
  // Claimed for its retry, which then times out: due again in 10 s, after its link dies.
  const again = await f.outbox.finish((await f.outbox.claim(id))!, {
    kind: "retry",
    error: "timeout",
  });
  assert.equal(again?.due, f.clock.now() + 500, "due when its link dies");
  f.clock.advance(500);
  assert.deepEqual((await f.outbox.due("direct", 10)).map((d) => d.id), [id]);
  assert.ok(await f.outbox.claim(id), "claimed, for the sender to report it");
  f.clock.advance(7 * 24 * 60 * 60 * 1000);
  assert.ok(await f.outbox.get(id), "an unfinished delivery never vanishes by the store's expiry");
});

Deno.test("a delivery's report record follows its state; sent ones lose their payload", async () => {
  using f = await fixture();
  const reportTo = ["workspace", "invitation", "i1"];
  await f.store.set(reportTo, { id: "i1", delivery: "pending" });
  const claimed = await f.add({ reportTo });
  const id = claimed.id;
  await f.outbox.finish(claimed, { kind: "sent" });
  assert.deepEqual((await f.store.get(reportTo))?.value, { id: "i1", delivery: "sent" });
  assert.equal((await f.outbox.get(id))?.payload, null);
});

Deno.test("a delivery without an expiry that keeps failing is given up after a day", async () => {
  using f = await fixture();
  const { id } = await f.add();
  f.clock.advance(GIVE_UP_AFTER_MS);
  const claimed = (await f.outbox.claim(id))!;
  const next = await f.outbox.finish(claimed, { kind: "retry", error: "ECONNREFUSED" });
  assert.equal(next?.state, "failed");
});

async function queued(f: Awaited<ReturnType<typeof fixture>>, queue: string, ...labels: string[]) {
  const recording = await f.outbox.recordInQueue(
    queue,
    labels.map((label) => ({ kind: "webhook", payload: {}, label })),
  );
  assert.ok(await f.store.commit(recording.checks, recording.mutations));
  return recording.deliveries;
}

Deno.test("a queue's deliveries are claimed one after another, in the order recorded", async () => {
  using f = await fixture();
  const [first, second] = await queued(f, "b1", "first", "second");
  const [third] = await queued(f, "b1", "third");
  const [other] = await queued(f, "b2", "other");
  assert.equal(await f.outbox.claim(second!.id), null, "waits for the first");
  assert.equal(await f.outbox.claim(third!.id), null);
  assert.ok(await f.outbox.claim(other!.id), "another queue is not held up");
  const claimed = (await f.outbox.claim(first!.id))!;
  await f.outbox.finish(claimed, { kind: "retry", error: "503" });
  f.clock.advance(60_000);
  assert.equal(await f.outbox.claim(second!.id), null, "still waits while the first retries");
  await f.outbox.finish((await f.outbox.claim(first!.id))!, { kind: "sent" });
  assert.equal(await f.outbox.claim(third!.id), null);
  await f.outbox.finish((await f.outbox.claim(second!.id))!, { kind: "sent" });
  assert.ok(await f.outbox.claim(third!.id));
});

Deno.test("the listing is oldest first, a queue's deliveries in its order within one millisecond", async () => {
  using f = await fixture();
  const labels = ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"];
  for (const label of labels) await queued(f, "b1", label);
  f.clock.advance(1);
  const later = await f.add();
  const listed = await f.outbox.list();
  assert.deepEqual(listed.map((d) => d.label), [...labels, later.label]);
});

Deno.test("two recordings racing on one queue: the second commit fails and takes the next place", async () => {
  using f = await fixture();
  const a = await f.outbox.recordInQueue("b1", [{ kind: "webhook", payload: {}, label: "a" }]);
  const b = await f.outbox.recordInQueue("b1", [{ kind: "webhook", payload: {}, label: "b" }]);
  assert.ok(await f.store.commit(a.checks, a.mutations));
  assert.equal(await f.store.commit(b.checks, b.mutations), false, "both read place 0");
  const [again] = await queued(f, "b1", "b");
  assert.deepEqual(again!.queue, { name: "b1", sequence: 1 });
});

Deno.test("a given-up delivery lets its queue go on; the admin's retry puts it first again", async () => {
  using f = await fixture();
  const [first, second, third] = await queued(f, "b1", "first", "second", "third");
  const failed = await f.outbox.finish((await f.outbox.claim(first!.id))!, {
    kind: "failed",
    error: "HTTP 410",
  });
  assert.equal(failed?.state, "failed");
  await f.outbox.finish((await f.outbox.claim(second!.id))!, { kind: "sent" });
  assert.equal((await f.outbox.retryNow(first!.id))?.state, "pending");
  assert.equal(await f.outbox.claim(third!.id), null, "the retried one goes first");
  assert.ok(await f.outbox.claim(first!.id));
});
