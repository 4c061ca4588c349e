// The authorization server's metrics move with real traffic: tokens issued and refreshed,
// refresh-token reuse, and every path in this process that revokes a grant.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import {
  exchange,
  jwtPayload,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
} from "../support/oauth_helpers.ts";

Deno.test("metrics: tokens issued and refreshed, refresh-token reuse, grants revoked by each path", async () => {
  const fx = await oauthFixture(adminEnv());
  const counts = async () => {
    const text = await scrape(fx.server.adminUrl);
    const issued = (grant: string) =>
      sample(text, `vestibule_oauth_tokens_issued_total{grant_type="${grant}"}`);
    const revoked = (by: string) =>
      sample(text, `vestibule_oauth_grants_revoked_total{by="${by}"}`);
    return {
      code: issued("authorization_code"),
      refresh: issued("refresh_token"),
      reuse: sample(text, "vestibule_oauth_refresh_reuse_total"),
      client: revoked("client"),
      account: revoked("account"),
      codeReplay: revoked("code_replay"),
      refreshReuse: revoked("refresh_reuse"),
      membershipEnded: revoked("membership_ended"),
    };
  };
  try {
    const zero = {
      code: 0,
      refresh: 0,
      reuse: 0,
      client: 0,
      account: 0,
      codeReplay: 0,
      refreshReuse: 0,
      membershipEnded: 0,
    };
    assert.deepEqual(await counts(), zero, "every series from the first scrape");
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    const tokens = async () => {
      const { code, verifier } = await obtainCode(owner, fx, client, { scope: "app.access" });
      const answer = await exchange(fx, client, code, verifier);
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      return {
        refreshToken: answer.json.refresh_token,
        accessToken: answer.json.access_token,
        code,
        verifier,
      };
    };

    // A code exchanged, its refresh token rotated, then presented again after the window.
    const first = await tokens();
    assert.equal((await refresh(fx, client, first.refreshToken)).status, 200);
    fx.clock.advance(31_000);
    assert.equal((await refresh(fx, client, first.refreshToken)).json.error, "invalid_grant");
    assert.deepEqual(await counts(), { ...zero, code: 1, refresh: 1, reuse: 1, refreshReuse: 1 });

    // The client revokes (RFC 7009); a code is replayed.
    const second = await tokens();
    const revoked = await fetch(`${fx.auth}/api/auth/oauth2/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: String(second.refreshToken),
        client_id: client.clientId,
      }),
    });
    assert.equal(revoked.status, 200);
    await revoked.body?.cancel();
    const third = await tokens();
    const replay = await exchange(fx, client, third.code, third.verifier);
    assert.equal(replay.json.error, "invalid_grant");

    // The account revokes on /account.
    await tokens();
    const page = await owner.get(`${fx.auth}/account`);
    const csrf = page.text.match(
      /name="csrf" value="([^"]+)">\s*<input type="hidden" name="grant" value="([^"]+)"/,
    )!;
    const done = await owner.post(`${fx.auth}/account`, { csrf: csrf[1]!, grant: csrf[2]! });
    assert.equal(done.status, 200);

    // The account left the business before the client refreshed.
    const last = await tokens();
    const claims = jwtPayload(String(last.accessToken));
    await createAccounts(fx.server.store, fx.clock.now)
      .removeMember(String(claims.business), String(claims.sub));
    assert.equal((await refresh(fx, client, last.refreshToken)).json.error, "invalid_grant");
    assert.deepEqual(await counts(), {
      ...zero,
      membershipEnded: 1,
      code: 5,
      refresh: 1,
      reuse: 1,
      refreshReuse: 1,
      client: 1,
      codeReplay: 1,
      account: 1,
    });
  } finally {
    await fx.close();
  }
});
