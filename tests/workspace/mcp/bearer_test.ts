import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/config.ts";
import { createRateLimiter, UNLIMITED } from "../../../src/http/rate_limiter.ts";
import type { AccessTokenClaims, TokenCheck } from "../../../src/oauth/access_token.ts";
import {
  bearerChallenge,
  createBearerAuth,
  DECISION_TTL_MS,
} from "../../../src/workspace/mcp/bearer.ts";
import { createFixture } from "../fixtures.ts";

const config = resolveConfig({ VESTIBULE_API_URL: "https://api.example.com" });

Deno.test("bearer authentication", async (t) => {
  const f = await createFixture();
  const claims = (scope: string): AccessTokenClaims => ({
    iss: "https://auth.example.com/api/auth",
    aud: config.apiUrl,
    sub: f.memberId,
    business: f.businessId,
    client_id: "client-1",
    scope,
    gid: "g",
    jti: "j",
    iat: 0,
    exp: Math.floor(f.clock.t / 1000) + 3600,
  });
  let verifications = 0;
  const tokens = new Map<string, TokenCheck>([
    ["good", { ok: true, claims: claims("app.access members.read"), clientName: "Client one" }],
    ["narrow", { ok: true, claims: claims("members.read"), clientName: "Client one" }],
    ["bad", { ok: false, description: "The access token's signature does not verify" }],
  ]);
  const verify = (jwt: string): Promise<TokenCheck> => {
    verifications++;
    return Promise.resolve(tokens.get(jwt) ?? { ok: false, description: "unknown" });
  };
  const auth = createBearerAuth({
    config,
    accounts: f.accounts,
    verify,
    now: f.now,
    verifyLimiter: UNLIMITED,
  });
  const request = (authorization?: string, query = "") =>
    new Request(`${config.apiUrl}/api/mcp${query}`, {
      method: "POST",
      headers: authorization ? { Authorization: authorization } : {},
    });
  try {
    await t.step("the challenge names the metadata, the scope and, when given, the error", () => {
      assert.equal(
        bearerChallenge(config, "app.access", "invalid_token"),
        'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource", scope="app.access", error="invalid_token"',
      );
    });

    const cases = [
      { name: "no header", header: undefined, status: 401, error: "invalid_request" },
      { name: "Basic", header: "Basic abc", status: 401, error: "invalid_request" },
      { name: "empty bearer", header: "Bearer ", status: 401, error: "invalid_token" },
      { name: "two tokens", header: "Bearer a b", status: 401, error: "invalid_token" },
      { name: "a bad token", header: "Bearer bad", status: 401, error: "invalid_token" },
      { name: "no app.access", header: "Bearer narrow", status: 403, error: "insufficient_scope" },
    ];
    for (const c of cases) {
      await t.step(`${c.name}: ${c.status} ${c.error}`, async () => {
        const outcome = await auth(request(c.header), "1.2.3.4");
        assert.ok(!outcome.ok && outcome.error !== null);
        assert.equal(outcome.error.status, c.status);
        assert.equal(outcome.error.code, c.error);
      });
    }

    await t.step("the scheme is case-insensitive and the auth carries the claims", async () => {
      const outcome = await auth(request("bearer good"), "1.2.3.4");
      assert.ok(outcome.ok);
      assert.deepEqual(outcome.auth, {
        accountId: f.memberId,
        businessId: f.businessId,
        clientId: "client-1",
        clientName: "Client one",
        grantId: "g",
        scopes: ["app.access", "members.read"],
        role: "member",
      });
    });

    await t.step("a query-string token is refused even beside a good header", async () => {
      const outcome = await auth(request("Bearer good", "?access_token=good"), "1.2.3.4");
      assert.ok(!outcome.ok && outcome.error?.status === 401);
    });

    await t.step("concurrent requests with one token share one verification", async () => {
      f.clock.t += DECISION_TTL_MS;
      const before = verifications;
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => auth(request("Bearer good"), "1.2.3.4")),
      );
      assert.ok(outcomes.every((outcome) => outcome.ok));
      assert.equal(verifications, before + 1);
    });

    await t.step("accepted tokens spend none of the address's verification budget", async () => {
      const limited = createBearerAuth({
        config,
        accounts: f.accounts,
        verify,
        now: f.now,
        verifyLimiter: createRateLimiter({ perMinute: 60, burst: 2, now: f.now }),
      });
      for (let i = 0; i < 5; i++) {
        f.clock.t += DECISION_TTL_MS;
        assert.ok((await limited(request("Bearer good"), "5.6.7.8")).ok, `request ${i}`);
      }
    });

    await t.step("a decision is reused for DECISION_TTL_MS, then checked again", async () => {
      f.clock.t += DECISION_TTL_MS;
      const before = verifications;
      assert.ok((await auth(request("Bearer good"), "1.2.3.4")).ok);
      assert.ok((await auth(request("Bearer good"), "1.2.3.4")).ok);
      assert.equal(verifications, before + 1);
      await f.accounts.removeMember(f.businessId, f.memberId);
      assert.ok((await auth(request("Bearer good"), "1.2.3.4")).ok);
      f.clock.t += DECISION_TTL_MS;
      const lapsed = await auth(request("Bearer good"), "1.2.3.4");
      assert.ok(!lapsed.ok && lapsed.error?.status === 403);
      assert.equal(lapsed.error.headers["WWW-Authenticate"], undefined);
    });

    await t.step("verifications of unseen tokens are limited per address", async () => {
      const limited = createBearerAuth({
        config,
        accounts: f.accounts,
        verify,
        now: f.now,
        verifyLimiter: createRateLimiter({ perMinute: 60, burst: 2, now: f.now }),
      });
      assert.equal((await limited(request("Bearer bad"), "5.6.7.8")).ok, false);
      assert.equal((await limited(request("Bearer bad"), "5.6.7.8")).ok, false);
      const third = await limited(request("Bearer bad"), "5.6.7.8");
      assert.ok(!third.ok && third.error === null);
      const elsewhere = await limited(request("Bearer bad"), "9.9.9.9");
      assert.ok(!elsewhere.ok && elsewhere.error?.status === 401);
    });
  } finally {
    f.close();
  }
});
