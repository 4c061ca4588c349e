// Token buckets in the store: what several processes on one store spend together.
import assert from "node:assert/strict";
import { createSharedRateLimiter } from "../../src/http/shared_rate_limiter.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Store } from "../../src/store/store.ts";
import { manualClock } from "../store/store_contract.ts";

const limiter = (store: Store, now: () => number, burst = 2) =>
  createSharedRateLimiter({ name: "mail", perMinute: 60, burst, store, now });

Deno.test("shared token bucket: two processes on one store spend one budget", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const [first, second] = [limiter(store, clock.now), limiter(store, clock.now)];
    assert.deepEqual(await first.take("a@example.com"), { allowed: true });
    assert.deepEqual(await second.take("a@example.com"), { allowed: true });
    assert.deepEqual(await first.take("a@example.com"), { allowed: false, retryAfterSeconds: 1 });
    assert.deepEqual(await second.take("a@example.com"), { allowed: false, retryAfterSeconds: 1 });
    assert.deepEqual(await second.take("b@example.com"), { allowed: true }, "keys are independent");
    clock.advance(1000);
    assert.deepEqual(await second.take("a@example.com"), { allowed: true });
    assert.equal((await first.take("a@example.com")).allowed, false);
  } finally {
    store.close();
  }
});

Deno.test("shared token bucket: a take that loses its commit to another process reads again", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const other = limiter(store, clock.now);
    let interleaved = false;
    // Between this process's read and its commit, the other process spends a token.
    const racing: Store = {
      ...store,
      async commit(checks, mutations) {
        if (!interleaved) {
          interleaved = true;
          assert.deepEqual(await other.take("k"), { allowed: true });
        }
        return await store.commit(checks, mutations);
      },
    };
    assert.deepEqual(await limiter(racing, clock.now).take("k"), { allowed: true });
    assert.ok(interleaved);
    assert.equal((await other.take("k")).allowed, false, "both tokens are spent, once each");
  } finally {
    store.close();
  }
});

Deno.test("shared token bucket: the record is gone once the bucket is full again", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const mail = limiter(store, clock.now);
    await mail.take("someone@example.com");
    await mail.take("someone@example.com");
    const records = await store.snapshot(["rate_limit"]);
    assert.equal(records.length, 1);
    assert.ok(
      !JSON.stringify(records).includes("someone@example.com"),
      "the key is kept as its digest",
    );
    clock.advance(1999);
    assert.equal((await store.snapshot(["rate_limit"])).length, 1);
    clock.advance(1);
    assert.deepEqual(await store.snapshot(["rate_limit"]), []);
  } finally {
    store.close();
  }
});

Deno.test("shared token bucket: a process whose clock is behind sees the tokens left, no fewer", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    await limiter(store, clock.now).take("k");
    const behind = limiter(store, () => clock.now() - 60_000);
    assert.deepEqual(await behind.take("k"), { allowed: true });
    assert.equal((await behind.take("k")).allowed, false);
  } finally {
    store.close();
  }
});
