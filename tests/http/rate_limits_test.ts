// The rate-limit policy: which limits replicas share, refusals reported by name, and off.
import assert from "node:assert/strict";
import type { RateLimitName } from "../../src/config/rate_limit_table.ts";
import { DEFAULT_RATE_LIMITS } from "../../src/config/rate_limit_table.ts";
import { UNLIMITED } from "../../src/http/rate_limiter.ts";
import { createLimiters, SHARED_LIMITS } from "../../src/http/rate_limits.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { manualClock } from "../store/store_contract.ts";

const LIMITS = { ...DEFAULT_RATE_LIMITS, registration: { perMinute: 1, burst: 1 } };

Deno.test("rate limits: the shared ones hold across processes on one store, the others do not", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    // Two processes: two sets of limiters on one store.
    const [first, second] = [1, 2].map(() =>
      createLimiters({ limits: LIMITS, store, now: clock.now })
    );
    assert.equal((await first!.shared("registration").take("192.0.2.1")).allowed, true);
    assert.equal((await second!.shared("registration").take("192.0.2.1")).allowed, false);
    const onboarding = { ...LIMITS.onboarding, burst: 1 };
    const [a, b] = [1, 2].map(() =>
      createLimiters({ limits: { ...LIMITS, onboarding }, store, now: clock.now }).local(
        "onboarding",
      )
    );
    assert.equal(a!.take("192.0.2.1").allowed, true);
    assert.equal(b!.take("192.0.2.1").allowed, true, "per process");
    assert.deepEqual([...SHARED_LIMITS].sort(), ["mail", "mail-address", "registration", "token"]);
  } finally {
    store.close();
  }
});

Deno.test("rate limits: each refusal is reported with its limit's name", async () => {
  const clock = manualClock();
  const store = await openKvStore(":memory:", clock.now);
  try {
    const refused: RateLimitName[] = [];
    const limiters = createLimiters({
      limits: { ...LIMITS, "token-failure": { perMinute: 1, burst: 1 } },
      store,
      now: clock.now,
      refused: (limit) => refused.push(limit),
    });
    const registration = limiters.shared("registration");
    await registration.take("a");
    await registration.take("a");
    const failures = limiters.local("token-failure");
    assert.equal(failures.check("a").allowed, true);
    failures.charge("a");
    assert.equal(failures.check("a").allowed, false);
    assert.deepEqual(refused, ["registration", "token-failure"]);
  } finally {
    store.close();
  }
});

Deno.test("rate limits: off allows everything and writes nothing", async () => {
  const store = await openKvStore(":memory:");
  try {
    const limiters = createLimiters({ limits: null, store, now: Date.now });
    assert.equal(limiters.local("workspace"), UNLIMITED);
    for (let i = 0; i < 50; i++) {
      assert.equal((await limiters.shared("mail").take("a@example.com")).allowed, true);
    }
    assert.deepEqual(await store.snapshot(), []);
  } finally {
    store.close();
  }
});
