// Backup and restore end to end: a server on store A issues tokens; `admin export` reads A while
// that server runs; `admin import` loads the file into an empty store B; a server on B, at the
// same addresses, serves the same JWKS, refreshes the refresh token and accepts the access token.
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import assert from "node:assert/strict";
import type { Store } from "../../../src/store/store.ts";
import { manualClock } from "../../store/store_contract.ts";
import { assertHonoured, handOut, oauthFixture } from "../support/oauth_helpers.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

function admin(store: Store, now: () => number, args: string[], input = "") {
  return adminRunner(store, { now, input: () => Promise.resolve(input) })(...args);
}

Deno.test("a restored store serves the same keys, grants and tokens", async () => {
  const clock = manualClock(Date.now());
  // Two store files the servers open themselves; the test exports and imports through handles
  // of its own (server_runtime.ts), so the servers may run on Node.js.
  const dir = await Deno.makeTempDir();
  const a = await oauthFixture({}, { dataUrl: storeFile(`${dir}/a`), clock });
  let backup, handed;
  try {
    handed = await handOut(a);
    const exported = await admin(a.server.store, clock.now, ["export"]);
    assert.equal(exported.code, 0, exported.err);
    backup = exported.out;
  } finally {
    await a.close();
  }
  assert.doesNotMatch(backup, new RegExp(handed.tokens.refresh_token), "a token in the backup");

  const pathB = storeFile(`${dir}/b`);
  const storeB = await openStoreFile(pathB, clock.now);
  try {
    const imported = await admin(storeB, clock.now, ["import"], backup);
    assert.equal(imported.code, 0, imported.err);
  } finally {
    await storeB.close();
  }
  const b = await oauthFixture(handed.origins, { dataUrl: pathB, clock });
  try {
    const refreshed = await assertHonoured(b, handed);
    assert.equal((await b.verify(String(refreshed.json.access_token))).ok, true);

    const again = await admin(b.server.store, clock.now, ["import"], backup);
    assert.equal(again.code, 1);
    assert.match(again.err, /not empty/);
  } finally {
    await b.close();
    await Deno.remove(dir, { recursive: true });
  }
});
