// A commit that misses the store's deadline but lands afterwards (issue 40, point 1): a refresh
// rotation whose client was told 503 while a stuck transaction held the table's lock, and whose
// rotation then landed when the lock went. The client, retrying with the token it still has, is
// not taken for a thief: within the retry window it gets the answer the landed rotation made,
// and the grant lives on.
import assert from "node:assert/strict";
import postgres from "postgres";
import { hashSecret } from "../../../src/secrets.ts";
import { refreshKey, type RefreshRecord } from "../../../src/oauth/refresh_tokens.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { manualClock } from "../../store/store_contract.ts";
import {
  oauthFixture,
  ownerBrowser,
  refresh,
  registerClient,
  tokensFor,
} from "../support/oauth_helpers.ts";

/** The store's deadline: the database ends a waiting statement at twice this. */
const DEADLINE_MS = 2_000;

Deno.test("a refresh rotation that lands after its client was told 503", async () => {
  const cluster = await startPgCluster();
  const url = await cluster.database();
  const clock = manualClock(Date.now());
  const fx = await oauthFixture({ VESTIBULE_DATA_TIMEOUT: String(DEADLINE_MS / 1000) }, {
    dataUrl: url,
    clock,
  });
  const holder = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    const first = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
    const key = refreshKey(await hashSecret(String(first.refresh_token)));

    // Reads answer, writes wait: the rotation's commit waits behind the lock.
    let release = () => {};
    const released = new Promise<void>((resolve) => release = resolve);
    let locked = () => {};
    const taken = new Promise<void>((resolve) => locked = resolve);
    const holding = holder.begin(async (tx) => {
      await tx`LOCK TABLE vestibule_records IN SHARE MODE`;
      locked();
      await released;
    });
    await taken;
    // Without a deadline the refresh would wait for the lock: it goes after a while regardless.
    const stuck = setTimeout(release, DEADLINE_MS + 10_000);
    let told;
    try {
      told = await refresh(fx, client, first.refresh_token);
    } finally {
      clearTimeout(stuck);
      release();
      await holding;
    }
    assert.equal(told.status, 503);
    assert.equal(told.response.headers.get("Retry-After"), "5");
    assert.deepEqual(told.json, {
      error: "temporarily_unavailable",
      error_description: "The service is briefly unavailable; retry after 5 seconds",
    });

    // The rotation the client never heard of lands once the lock is gone.
    const giveUp = performance.now() + 4 * DEADLINE_MS;
    let record = await fx.server.store.get<RefreshRecord>(key);
    while (record?.value.state !== "rotated" && performance.now() < giveUp) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      record = await fx.server.store.get<RefreshRecord>(key);
    }
    assert.equal(record?.value.state, "rotated", "the late commit landed");

    // The client comes back as told (Retry-After: 5) with the only token it has.
    clock.advance(5_000);
    const retried = await refresh(fx, client, first.refresh_token);
    assert.equal(retried.status, 200, JSON.stringify(retried.json));
    assert.notEqual(retried.json.refresh_token, first.refresh_token);
    assert.equal((await fx.verify(String(retried.json.access_token))).ok, true, "not revoked");
    const next = await refresh(fx, client, retried.json.refresh_token);
    assert.equal(next.status, 200, "the rotated-to token works on");
  } finally {
    await holder.end();
    await fx.close();
    await cluster.stop();
  }
});
