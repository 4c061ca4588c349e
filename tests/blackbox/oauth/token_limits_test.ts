// Rate limits of the token and revocation endpoints: a client's budget is spent only by
// requests that prove they are its own; everything else spends its address's failure budget.
import assert from "node:assert/strict";
import {
  exchange,
  type OAuthFixture,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
  type TestClient,
  token,
  tokensFor,
} from "../support/oauth_helpers.ts";

/** The defaults: `token-failure` lets 60 failures through per address, then 429. */
const FAILURES = 60;

const revoke = (fx: OAuthFixture, client: TestClient, tokenValue: unknown, from?: string) =>
  fetch(`${fx.auth}/api/auth/oauth2/revoke`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      ...(from ? { "X-Forwarded-For": from } : {}),
    },
    body: new URLSearchParams({ token: String(tokenValue), client_id: client.clientId }),
  });

Deno.test("nobody can spend a client's token budget with its public client_id", async (t) => {
  // Trusting X-Forwarded-For lets the attackers speak from addresses of their own.
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "on", VESTIBULE_TRUST_PROXY: "on" });
  try {
    const victim = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    const tokens = await tokensFor(fx, owner, victim);

    await t.step("garbage refreshes spend the attacker's address budget only", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        const answer = await refresh(fx, victim, `garbage-${i}`, {}, {
          "X-Forwarded-For": "203.0.113.1",
        });
        statuses.push(answer.status);
        if (answer.status === 429) {
          assert.ok(Number(answer.response.headers.get("Retry-After")) >= 1);
          assert.equal(answer.json.error, "temporarily_unavailable");
        } else {
          assert.equal(answer.json.error, "invalid_grant");
        }
      }
      const own = await refresh(fx, victim, tokens.refresh_token);
      assert.equal(own.status, 200, JSON.stringify(own.json));
      tokens.refresh_token = own.json.refresh_token;
      assert.deepEqual(statuses, [
        ...Array(FAILURES).fill(400),
        ...Array(200 - FAILURES).fill(429),
      ]);
    });

    await t.step("a locked-out address is refused before its request is looked at", async () => {
      const locked = await refresh(fx, victim, tokens.refresh_token, {}, {
        "X-Forwarded-For": "203.0.113.1",
      });
      assert.equal(locked.status, 429);
      // Past the 30-second retry window: had that request rotated the token, this would be reuse.
      fx.clock.advance(31_000);
      const own = await refresh(fx, victim, tokens.refresh_token);
      assert.equal(own.status, 200, JSON.stringify(own.json));
      tokens.refresh_token = own.json.refresh_token;
    });

    await t.step("unknown tokens at revocation spend the address budget too", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) {
        const answer = await revoke(fx, victim, `garbage-${i}`, "203.0.113.2");
        await answer.body?.cancel();
        statuses.push(answer.status);
      }
      const own = await revoke(fx, victim, tokens.refresh_token);
      await own.body?.cancel();
      assert.equal(own.status, 200);
      assert.equal((await fx.verify(String(tokens.access_token))).ok, false);
      // RFC 7009 §2.2: an unknown token is answered 200, and still counts as a failure.
      assert.deepEqual(statuses, [
        ...Array(FAILURES).fill(200),
        ...Array(200 - FAILURES).fill(429),
      ]);
    });

    await t.step("unknown clients and wrong secrets spend it as well", async () => {
      const confidential = await registerClient(fx, {
        token_endpoint_auth_method: "client_secret_post",
      });
      const statuses: number[] = [];
      for (let i = 0; i < FAILURES + 1; i++) {
        const fields = i % 2 === 0
          ? { client_id: `ghost-${i}` }
          : { client_id: confidential.clientId, client_secret: `guess-${i}` };
        const answer = await token(fx, { grant_type: "authorization_code", code: "x", ...fields }, {
          "X-Forwarded-For": "203.0.113.3",
        });
        statuses.push(answer.status);
      }
      assert.deepEqual(statuses, [...Array(FAILURES).fill(401), 429]);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("a client's own requests spend its budget of 120 a minute", async (t) => {
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "on" });
  try {
    await t.step("a confidential client is itself once its secret is right", async () => {
      const client = await registerClient(fx, { token_endpoint_auth_method: "client_secret_post" });
      const other = await registerClient(fx, { token_endpoint_auth_method: "client_secret_post" });
      const attempt = (c: TestClient) =>
        token(fx, {
          grant_type: "authorization_code",
          code: "x",
          client_id: c.clientId,
          client_secret: c.secret!,
        });
      // Its failures are its own: 120 bad codes, past the address's 60 failures.
      for (let i = 0; i < 120; i++) assert.equal((await attempt(client)).status, 400);
      const limited = await attempt(client);
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.response.headers.get("Retry-After")) >= 1);
      assert.equal(limited.response.headers.get("Cache-Control"), "no-store");
      assert.equal((await attempt(other)).status, 400, "other clients are unaffected");
      // 120 a minute: half a minute buys exactly 60 more.
      fx.clock.advance(30_000);
      for (let i = 0; i < 60; i++) {
        assert.equal((await attempt(client)).status, 400, `attempt ${i} after 30 s`);
      }
      assert.equal((await attempt(client)).status, 429);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("a public client's valid grant spends its budget, refused before it is used", async () => {
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "token=3" });
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    let current = (await tokensFor(fx, owner, client)).refresh_token;
    for (let i = 0; i < 2; i++) {
      const next = await refresh(fx, client, current);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      current = next.json.refresh_token;
    }
    const limited = await refresh(fx, client, current);
    assert.equal(limited.status, 429);
    assert.equal(limited.json.error, "temporarily_unavailable");
    const { code, verifier } = await obtainCode(owner, fx, client);
    assert.equal((await exchange(fx, client, code, verifier)).status, 429);
    // 40 s buy two requests, and take the refresh token past its 30-second retry window:
    // had the refused refresh rotated it, presenting it now would be reuse.
    fx.clock.advance(40_000);
    const later = await refresh(fx, client, current);
    assert.equal(later.status, 200, JSON.stringify(later.json));
    const exchanged = await exchange(fx, client, code, verifier);
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.json));
  } finally {
    await fx.close();
  }
});
