// The SQLite store's deferred commits: which may leave their sync to later, and when a sync of
// their own is due (src/store/sync_debt.ts).
import assert from "node:assert/strict";
import { createSyncDebt, DEFERRED_SYNC_MS } from "../../src/store/sync_debt.ts";

Deno.test("a deferred commit owes a sync, due once, within the window", () => {
  const debt = createSyncDebt(500);
  assert.equal(debt.owed(), false);
  assert.equal(debt.mayDefer(1_000), true);
  // The first unsynced commit schedules the sync; those after it share it.
  assert.equal(debt.deferred(1_000), 500);
  assert.equal(debt.owed(), true);
  assert.equal(debt.deferred(1_200), null);
  assert.equal(debt.mayDefer(1_499), true);
  // Past the window from the oldest unsynced commit, the next commit syncs instead.
  assert.equal(debt.mayDefer(1_500), false);
  debt.synced();
  assert.equal(debt.owed(), false);
  assert.equal(debt.mayDefer(1_600), true);
  assert.equal(debt.deferred(1_600), 500);
});

Deno.test("the window is half a second by default", () => {
  assert.equal(DEFERRED_SYNC_MS, 500);
  const debt = createSyncDebt();
  assert.equal(debt.deferred(0), DEFERRED_SYNC_MS);
  assert.equal(debt.mayDefer(DEFERRED_SYNC_MS - 1), true);
  assert.equal(debt.mayDefer(DEFERRED_SYNC_MS), false);
});
