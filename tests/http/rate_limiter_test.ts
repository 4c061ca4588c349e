import assert from "node:assert/strict";
import { createRateLimiter, UNLIMITED } from "../../src/http/rate_limiter.ts";

Deno.test("token bucket: a burst, then Retry-After until refilled", () => {
  let now = 0;
  const limiter = createRateLimiter({ perMinute: 60, burst: 3, now: () => now });
  for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take("a"), { allowed: true });
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 1 });
  assert.deepEqual(limiter.take("b"), { allowed: true }, "keys are independent");
  now += 1000;
  assert.deepEqual(limiter.take("a"), { allowed: true });
  assert.equal(limiter.take("a").allowed, false);
});

Deno.test("token bucket: Retry-After is the wait for one token, in whole seconds", () => {
  let now = 0;
  const limiter = createRateLimiter({ perMinute: 6, burst: 1, now: () => now });
  limiter.take("a");
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 10 });
  now += 4000;
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 6 });
});

Deno.test("token bucket: memory is bounded; forgotten keys return with a full bucket", () => {
  const limiter = createRateLimiter({ perMinute: 1, burst: 1, maxKeys: 2, now: () => 0 });
  limiter.take("a");
  assert.equal(limiter.take("a").allowed, false);
  limiter.take("b");
  limiter.take("c"); // evicts a, the least recently used
  assert.equal(limiter.take("a").allowed, true);
});

Deno.test("token bucket: a fractional rate refills whole tokens on time", () => {
  let t = 0;
  const limiter = createRateLimiter({ perMinute: 5 / 15, burst: 5, now: () => t });
  for (let i = 0; i < 5; i++) assert.equal(limiter.take("k").allowed, true);
  assert.equal(limiter.take("k").allowed, false);
  t += 15 * 60_000;
  for (let i = 0; i < 5; i++) assert.equal(limiter.take("k").allowed, true, `token ${i}`);
  assert.equal(limiter.take("k").allowed, false);
});

Deno.test("token bucket: a fractional rate's Retry-After is when the token is back", () => {
  let t = 0;
  const limiter = createRateLimiter({ perMinute: 5 / 15, burst: 5, now: () => t });
  for (let i = 0; i < 5; i++) limiter.take("k");
  // One token every 3 minutes: 180 s, not the 181 that float dust would round up to.
  assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterSeconds: 180 });
  t += 179_000;
  assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterSeconds: 1 });
  t += 1_000;
  assert.deepEqual(limiter.take("k"), { allowed: true });
});

Deno.test("token bucket: check spends nothing; charge spends, into a debt paid back first", () => {
  let now = 0;
  const limiter = createRateLimiter({ perMinute: 60, burst: 2, now: () => now });
  for (let i = 0; i < 5; i++) assert.deepEqual(limiter.check("a"), { allowed: true });
  // Three requests let in together, all charged: one more than the bucket held.
  for (let i = 0; i < 3; i++) limiter.charge("a");
  assert.deepEqual(limiter.check("a"), { allowed: false, retryAfterSeconds: 2 });
  now += 1000;
  assert.equal(limiter.check("a").allowed, false, "the debt is paid back first");
  now += 1000;
  assert.deepEqual(limiter.check("a"), { allowed: true });
  for (let i = 0; i < 10; i++) limiter.charge("a");
  assert.deepEqual(
    limiter.check("a"),
    { allowed: false, retryAfterSeconds: 3 },
    "the debt is at most one burst",
  );
  assert.deepEqual(limiter.take("b"), { allowed: true }, "keys are independent");
});

Deno.test("UNLIMITED always allows", () => {
  for (let i = 0; i < 1000; i++) {
    UNLIMITED.charge("x");
    assert.equal(UNLIMITED.take("x").allowed, true);
    assert.equal(UNLIMITED.check("x").allowed, true);
  }
});
