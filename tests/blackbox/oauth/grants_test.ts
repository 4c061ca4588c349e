// One grant per account, business and client: a new consent, once its code is exchanged,
// replaces the grant's scopes and rotates its tokens out; /account shows one row.
import assert from "node:assert/strict";
import type { Browser } from "../support/accounts_browser.ts";
import {
  exchange,
  jwtPayload,
  type OAuthFixture,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
  tokensFor,
} from "../support/oauth_helpers.ts";

const HOUR = 60 * 60 * 1000;
/** "Within seconds": a fixed bound, not the implementation's own cache lifetime. */
const REVOCATION_DELAY_MS = 2_000;

/** tools/list on the workspace endpoint: the resource server's own verdict on the token. */
async function workspaceStatus(fx: OAuthFixture, tokens: Record<string, unknown>) {
  const response = await fetch(`${fx.server.apiUrl}/api/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-06-18",
      Authorization: `Bearer ${tokens.access_token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.body?.cancel();
  return response.status;
}

/** The grant rows /account shows: each one's scopes and grant id. */
async function accountRows(browser: Browser, fx: OAuthFixture) {
  const page = await browser.get(`${fx.auth}/account`);
  assert.equal(page.status, 200);
  return page.text.split("<tr>").flatMap((row) => {
    const gid = /name="grant" value="([^"]+)"/.exec(row)?.[1];
    const scopes = /<td data-label="Permissions">([^<]*)/.exec(row)?.[1]?.trim();
    return gid === undefined ? [] : [{ scopes, gid }];
  });
}

const gidOf = (tokens: Record<string, unknown>) => jwtPayload(String(tokens.access_token)).gid;

Deno.test("one grant per account, business and client", async (t) => {
  const fx = await oauthFixture();
  const { verify } = fx;
  try {
    const client = await registerClient(fx);
    const other = await registerClient(fx, { client_name: "Other Agent" });

    await t.step("three step-up consents leave one grant with the latest scopes", async () => {
      const owner = await ownerBrowser(fx, "stepper@example.com");
      const first = await tokensFor(fx, owner, client, { scope: "app.access" });
      assert.equal(await workspaceStatus(fx, first), 200);
      const second = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      const third = await tokensFor(fx, owner, client, {
        scope: "app.access members.read members.request",
      });
      assert.equal(third.scope, "app.access members.read members.request");
      assert.deepEqual(await accountRows(owner, fx), [
        { scopes: "app.access members.read members.request", gid: gidOf(third) },
      ]);

      for (const earlier of [first, second]) {
        assert.equal((await verify(String(earlier.access_token))).ok, false);
        const refused = await refresh(fx, client, earlier.refresh_token);
        assert.equal(refused.status, 400);
        assert.equal(refused.json.error, "invalid_grant");
      }
      // The workspace reuses an accepted token's verdict briefly (docs/workspace.md: within a second).
      fx.clock.advance(REVOCATION_DELAY_MS);
      assert.equal(await workspaceStatus(fx, first), 401);
      assert.equal(await workspaceStatus(fx, third), 200);
      assert.equal((await verify(String(third.access_token))).ok, true);
      const next = await refresh(fx, client, third.refresh_token);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.equal(next.json.scope, "app.access members.read members.request");
    });

    await t.step("a narrower consent keeps what the grant held; refresh cannot widen", async () => {
      const owner = await ownerBrowser(fx, "narrower@example.com");
      const wide = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      const again = await tokensFor(fx, owner, client, { scope: "app.access" });
      // A person removes access on /account, not by consenting to less.
      assert.equal(again.scope, "app.access members.read");
      assert.deepEqual(await accountRows(owner, fx), [{
        scopes: "app.access members.read",
        gid: gidOf(again),
      }]);
      assert.equal((await verify(String(wide.access_token))).ok, false);
      assert.equal((await refresh(fx, client, wide.refresh_token)).json.error, "invalid_grant");
      const widened = await refresh(fx, client, again.refresh_token, {
        scope: "app.access members.read billing.read",
      });
      assert.equal(widened.json.error, "invalid_scope");
    });

    await t.step("two clients hold two grants, each replaced only by its own consent", async () => {
      const owner = await ownerBrowser(fx, "two@example.com");
      const mine = await tokensFor(fx, owner, client, { scope: "app.access" });
      const theirs = await tokensFor(fx, owner, other, { scope: "app.access" });
      const mineAgain = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      const rows = await accountRows(owner, fx);
      assert.deepEqual(rows.map((r) => r.gid).sort(), [gidOf(theirs), gidOf(mineAgain)].sort());
      assert.equal((await verify(String(theirs.access_token))).ok, true);
      assert.equal((await verify(String(mine.access_token))).ok, false);
    });

    await t.step("an unexchanged consent changes nothing", async () => {
      const owner = await ownerBrowser(fx, "abandoned@example.com");
      const kept = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      await obtainCode(owner, fx, client, { scope: "app.access" });
      assert.deepEqual(await accountRows(owner, fx), [
        { scopes: "app.access members.read", gid: gidOf(kept) },
      ]);
      assert.equal((await verify(String(kept.access_token))).ok, true);
    });

    await t.step("replaying an earlier consent's code leaves the current grant alone", async () => {
      const owner = await ownerBrowser(fx, "replayed@example.com");
      const old = await obtainCode(owner, fx, client, { scope: "app.access" });
      assert.equal((await exchange(fx, client, old.code, old.verifier)).status, 200);
      const current = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      const replay = await exchange(fx, client, old.code, old.verifier);
      assert.equal(replay.json.error, "invalid_grant");
      assert.equal((await verify(String(current.access_token))).ok, true);
      assert.equal((await refresh(fx, client, current.refresh_token)).status, 200);
    });

    await t.step("concurrent exchanges for one client leave one working grant", async () => {
      const owner = await ownerBrowser(fx, "racer@example.com");
      const codes = [
        await obtainCode(owner, fx, client, { scope: "app.access" }),
        await obtainCode(owner, fx, client, { scope: "app.access members.read" }),
      ];
      const answers = await Promise.all(
        codes.map(({ code, verifier }) => exchange(fx, client, code, verifier)),
      );
      for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.json));
      const rows = await accountRows(owner, fx);
      assert.equal(rows.length, 1);
      const alive = [];
      for (const answer of answers) alive.push((await verify(String(answer.json.access_token))).ok);
      assert.deepEqual(alive.filter((ok) => ok).length, 1);
      const winner = answers[alive.indexOf(true)]!.json;
      assert.equal(rows[0]!.gid, gidOf(winner));
    });

    await t.step("the grant's lifetime counts from the latest consent", async () => {
      const owner = await ownerBrowser(fx, "lifetime@example.com");
      await tokensFor(fx, owner, client, { scope: "app.access" });
      fx.clock.advance(20 * HOUR);
      const renewed = await tokensFor(fx, owner, client, { scope: "app.access members.read" });
      fx.clock.advance(20 * HOUR);
      assert.equal(
        (await refresh(fx, client, renewed.refresh_token)).status,
        200,
        "24 hours from renewal",
      );
      const offline = await tokensFor(fx, owner, client, { scope: "app.access offline_access" });
      fx.clock.advance(10 * 24 * HOUR);
      assert.equal(
        (await refresh(fx, client, offline.refresh_token)).status,
        200,
        "offline_access now holds",
      );
    });
  } finally {
    await fx.close();
  }
});
