import assert from "node:assert/strict";
import { ATTEMPT_TTL_MS } from "../../../src/workspace/domain/connection_tests.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("connection tests", async (t) => {
  const f = await createFixture();
  const owner = { businessId: f.businessId, clientId: "client-1", accountId: f.ownerId };
  const tests = f.connectionTests;
  try {
    await t.step("an attempt is verified by its exact id, once", async () => {
      const { attempt, created } = await tests.start(owner, false);
      assert.equal(created, true);
      assert.equal(attempt.status, "pending");
      const outcome = await tests.verify(owner, attempt.id);
      assert.ok(outcome.ok);
      assert.equal(outcome.attempt.status, "verified");
      assert.equal((await tests.verify(owner, attempt.id)).ok, true);
    });

    await t.step("a verified attempt is returned again unless restarted", async () => {
      const again = await tests.start(owner, false);
      assert.equal(again.created, false);
      assert.equal(again.attempt.status, "verified");
      const restarted = await tests.start(owner, true);
      assert.equal(restarted.created, true);
      assert.equal(restarted.attempt.status, "pending");
    });

    const cases = [
      {
        name: "someone else's client",
        as: { ...owner, clientId: "client-2" },
        reason: /was started by this client for this business/,
      },
      {
        name: "another business",
        as: { ...owner, businessId: "other" },
        reason: /was started by this client for this business/,
      },
    ];
    for (const c of cases) {
      await t.step(`an attempt of ${c.name} is refused`, async () => {
        const { attempt } = await tests.start(owner, true);
        const outcome = await tests.verify(c.as, attempt.id);
        assert.ok(!outcome.ok);
        assert.match(outcome.reason, c.reason);
      });
    }

    await t.step("an unknown attempt is refused", async () => {
      const outcome = await tests.verify(owner, "no-such-attempt");
      assert.ok(!outcome.ok);
      assert.match(outcome.reason, /No connection test attempt no-such-attempt/);
    });

    await t.step("a superseded attempt is refused", async () => {
      const first = await tests.start(owner, true);
      await tests.start(owner, true);
      const outcome = await tests.verify(owner, first.attempt.id);
      assert.ok(!outcome.ok);
      assert.match(outcome.reason, /superseded/);
    });

    await t.step("an expired attempt is refused", async () => {
      const { attempt } = await tests.start(owner, true);
      f.clock.t += ATTEMPT_TTL_MS;
      const outcome = await tests.verify(owner, attempt.id);
      assert.ok(!outcome.ok);
      assert.match(outcome.reason, /expired at/);
    });

    await t.step("statuses list each client's current attempt", async () => {
      const other = { ...owner, clientId: "client-2" };
      const { attempt } = await tests.start(other, false);
      await tests.verify(other, attempt.id);
      const statuses = await tests.statuses(f.businessId);
      assert.deepEqual(
        statuses.map((s) => [s.clientId, s.status]).sort(),
        [["client-1", "pending"], ["client-2", "verified"]],
      );
    });
  } finally {
    f.close();
  }
});
