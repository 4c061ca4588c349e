// Backup and restore end to end: a server on store A issues tokens; `admin export` reads A while
// that server runs; `admin import` loads the file into an empty store B; a server on B, at the
// same addresses, serves the same JWKS, refreshes the refresh token and accepts the access token.
import { adminRunner } from "../../admin/admin_runner.ts";
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { manualClock } from "../../store/store_contract.ts";
import { INITIALIZE, mcpPost } from "../support/mcp_helpers.ts";
import {
  exchange,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
} from "../support/oauth_helpers.ts";

function admin(store: Store, now: () => number, args: string[], input = "") {
  return adminRunner(store, { now, input: () => Promise.resolve(input) })(...args);
}

Deno.test("a restored store serves the same keys, grants and tokens", async () => {
  const clock = manualClock(Date.now());
  const storeA = await openKvStore(":memory:", clock.now);
  const a = await oauthFixture({}, { store: storeA, clock });
  let backup, jwksA, tokens, client, origins;
  try {
    const browser = await ownerBrowser(a, "owner@example.com");
    client = await registerClient(a);
    const { code, verifier } = await obtainCode(browser, a, client);
    const issued = await exchange(a, client, code, verifier);
    assert.equal(issued.status, 200, JSON.stringify(issued.json));
    tokens = issued.json as { access_token: string; refresh_token: string };
    jwksA = await (await fetch(`${a.auth}/api/auth/jwks`)).json();
    const exported = await admin(storeA, clock.now, ["export"]);
    assert.equal(exported.code, 0, exported.err);
    backup = exported.out;
    origins = {
      VESTIBULE_BASE_URL: a.server.baseUrl,
      VESTIBULE_AUTH_URL: a.server.authUrl,
      VESTIBULE_API_URL: a.server.apiUrl,
    };
  } finally {
    await a.close();
  }
  assert.doesNotMatch(backup, new RegExp(tokens.refresh_token), "a token in the backup");

  const storeB = await openKvStore(":memory:", clock.now);
  const imported = await admin(storeB, clock.now, ["import"], backup);
  assert.equal(imported.code, 0, imported.err);
  const b = await oauthFixture(origins, { store: storeB, clock });
  try {
    assert.deepEqual(await (await fetch(`${b.auth}/api/auth/jwks`)).json(), jwksA);

    const mcp = await mcpPost(`${b.server.apiUrl}/api/mcp`, INITIALIZE, {
      "MCP-Protocol-Version": "2025-11-25",
      Authorization: `Bearer ${tokens.access_token}`,
    });
    assert.equal(mcp.status, 200, await mcp.clone().text());
    await mcp.body?.cancel();

    const refreshed = await refresh(b, client, tokens.refresh_token, { resource: b.server.apiUrl });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    assert.equal((await b.verify(String(refreshed.json.access_token))).ok, true);

    const again = await admin(storeB, clock.now, ["import"], backup);
    assert.equal(again.code, 1);
    assert.match(again.err, /not empty/);
  } finally {
    await b.close();
  }
});
