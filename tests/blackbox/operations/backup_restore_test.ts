// Backup and restore end to end: a server on store A issues tokens; `admin export` reads A while
// that server runs; `admin import` loads the file into an empty store B; a server on B, at the
// same addresses, serves the same JWKS, refreshes the refresh token and accepts the access token.
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { manualClock } from "../../store/store_contract.ts";
import { assertHonoured, handOut, oauthFixture } from "../support/oauth_helpers.ts";
import { denoOnly } from "../support/server_runtime.ts";

function admin(store: Store, now: () => number, args: string[], input = "") {
  return adminRunner(store, { now, input: () => Promise.resolve(input) })(...args);
}

Deno.test("a restored store serves the same keys, grants and tokens", {
  ignore: denoOnly("serves stores the test opened, to export and import in this process"),
}, async () => {
  const clock = manualClock(Date.now());
  const storeA = await openKvStore(":memory:", clock.now);
  const a = await oauthFixture({}, { store: storeA, clock });
  let backup, handed;
  try {
    handed = await handOut(a);
    const exported = await admin(storeA, clock.now, ["export"]);
    assert.equal(exported.code, 0, exported.err);
    backup = exported.out;
  } finally {
    await a.close();
  }
  assert.doesNotMatch(backup, new RegExp(handed.tokens.refresh_token), "a token in the backup");

  const storeB = await openKvStore(":memory:", clock.now);
  const imported = await admin(storeB, clock.now, ["import"], backup);
  assert.equal(imported.code, 0, imported.err);
  const b = await oauthFixture(handed.origins, { store: storeB, clock });
  try {
    const refreshed = await assertHonoured(b, handed);
    assert.equal((await b.verify(String(refreshed.json.access_token))).ok, true);

    const again = await admin(storeB, clock.now, ["import"], backup);
    assert.equal(again.code, 1);
    assert.match(again.err, /not empty/);
  } finally {
    await b.close();
  }
});
