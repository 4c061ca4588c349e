// Refresh tokens: rotation, the 30-second identical answer, reuse detection, scope
// narrowing, lifetimes; and revocation (RFC 7009).
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import {
  exchange,
  jwtPayload,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
  type TestClient,
  tokensFor,
} from "../support/oauth_helpers.ts";

const DAY = 24 * 60 * 60 * 1000;
/** The scope of most grants here: two, so that narrowing has one to drop. */
const BOTH = { scope: "app.access members.read" };

Deno.test("refresh tokens", async (t) => {
  const fx = await oauthFixture();
  const { verify } = fx;
  try {
    const client = await registerClient(fx);
    const other = await registerClient(fx, { client_name: "Other" });
    const owner = await ownerBrowser(fx, "owner@example.com");

    await t.step("a refresh rotates the token and issues a new access token", async () => {
      const first = await tokensFor(fx, owner, client, BOTH);
      const next = await refresh(fx, client, first.refresh_token);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.equal(next.response.headers.get("Cache-Control"), "no-store");
      assert.notEqual(next.json.refresh_token, first.refresh_token);
      assert.notEqual(next.json.access_token, first.access_token);
      assert.equal(next.json.scope, "app.access members.read");
      assert.equal((await verify(String(next.json.access_token))).ok, true);
      const third = await refresh(fx, client, next.json.refresh_token, {
        resource: fx.server.apiUrl,
      });
      assert.equal(third.status, 200);
    });
    await t.step("the previous token within 30 s gets the identical answer", async () => {
      const first = await tokensFor(fx, owner, client, BOTH);
      const a = await refresh(fx, client, first.refresh_token);
      fx.clock.advance(29_000);
      const b = await refresh(fx, client, first.refresh_token);
      assert.equal(b.status, 200);
      assert.deepEqual(b.json, a.json);
      assert.equal((await verify(String(a.json.access_token))).ok, true, "the grant lives on");
    });
    await t.step("concurrent refreshes all get the same answer", async () => {
      const first = await tokensFor(fx, owner, client, BOTH);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => refresh(fx, client, first.refresh_token)),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 200, JSON.stringify(answer.json));
        assert.deepEqual(answer.json, answers[0]!.json);
      }
      const next = await refresh(fx, client, answers[0]!.json.refresh_token);
      assert.equal(next.status, 200, "exactly one successor token exists and works");
    });
    await t.step("reuse after the window revokes that grant only", async () => {
      const victim = await tokensFor(fx, owner, client, BOTH);
      const bystander = await tokensFor(fx, owner, other, BOTH); // the same client would replace it
      // The same client for another account: a grant of its own, not the client's to lose.
      const next = await ownerBrowser(fx, "next-door@example.com");
      const neighbour = await tokensFor(fx, next, client, BOTH);
      const rotated = await refresh(fx, client, victim.refresh_token);
      fx.clock.advance(31_000);
      const replay = await refresh(fx, client, victim.refresh_token);
      assert.equal(replay.status, 400);
      assert.deepEqual(replay.json, {
        error: "invalid_grant",
        error_description: "The refresh token was already used; the grant is revoked",
      });
      assert.equal(
        (await refresh(fx, client, rotated.json.refresh_token)).json.error,
        "invalid_grant",
      );
      assert.equal((await verify(String(rotated.json.access_token))).ok, false);
      assert.equal((await verify(String(bystander.access_token))).ok, true);
      assert.equal((await refresh(fx, other, bystander.refresh_token)).status, 200);
      assert.equal((await verify(String(neighbour.access_token))).ok, true);
      assert.equal((await refresh(fx, client, neighbour.refresh_token)).status, 200);
    });
    await t.step("narrowing is allowed, widening refused", async () => {
      const first = await tokensFor(fx, owner, client, BOTH);
      const narrow = await refresh(fx, client, first.refresh_token, { scope: "app.access" });
      assert.equal(narrow.status, 200);
      assert.equal(narrow.json.scope, "app.access");
      const back = await refresh(fx, client, narrow.json.refresh_token);
      assert.equal(back.json.scope, "app.access members.read", "the grant itself keeps its scopes");
      const wide = await refresh(fx, client, back.json.refresh_token, {
        scope: "app.access billing.manage",
      });
      assert.equal(wide.json.error, "invalid_scope");
      const unknown = await refresh(fx, client, back.json.refresh_token, { scope: "root" });
      assert.equal(unknown.json.error, "invalid_scope");
    });
    await t.step("an owner demoted to member loses the owner-only scopes on refresh", async () => {
      const boss = await ownerBrowser(fx, "demoted@example.com");
      const first = await tokensFor(fx, boss, client, { scope: "app.access billing.manage" });
      assert.equal(first.scope, "app.access billing.manage");
      const claims = jwtPayload(String(first.access_token));
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      await accounts.addMember(String(claims.business), "demoted@example.com", "member");
      const next = await refresh(fx, client, first.refresh_token);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.equal(next.json.scope, "app.access");
      assert.equal(jwtPayload(String(next.json.access_token)).scope, "app.access");
      const nothing = await refresh(fx, client, next.json.refresh_token, {
        scope: "billing.manage",
      });
      assert.equal(nothing.status, 400, "no token without any scope");
      assert.equal(nothing.json.error, "invalid_scope");
    });
    await t.step(
      "refresh by another client, with another resource, or an unknown token",
      async () => {
        const first = await tokensFor(fx, owner, client, BOTH);
        const stolen = await refresh(fx, other, first.refresh_token);
        assert.equal(stolen.json.error, "invalid_grant");
        const elsewhere = await refresh(fx, client, first.refresh_token, {
          resource: "https://other.example",
        });
        assert.equal(elsewhere.json.error, "invalid_target");
        assert.equal((await refresh(fx, client, "made-up")).json.error, "invalid_grant");
        assert.equal((await refresh(fx, client, first.refresh_token)).status, 200, "still usable");
      },
    );
    await t.step("codes, tokens and secrets are stored hashed and never logged", async () => {
      const confidential = await registerClient(fx, {
        token_endpoint_auth_method: "client_secret_post",
      });
      const { code, verifier } = await obtainCode(owner, fx, confidential, {
        scope: "openid app.access",
      });
      const first = await exchange(fx, confidential, code, verifier, {
        client_secret: confidential.secret!,
      });
      assert.equal(first.status, 200, JSON.stringify(first.json));
      // Rotated, and the answer kept for the 30-second retry window.
      const next = await refresh(fx, confidential, first.json.refresh_token, {
        client_secret: confidential.secret!,
      });
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const secrets = [
        code,
        confidential.secret!,
        ...[first.json, next.json].flatMap((answer) =>
          ["access_token", "refresh_token", "id_token"].map((name) => String(answer[name]))
        ),
      ];
      const stored: string[] = [];
      for await (const entry of fx.server.store.list([])) {
        stored.push(JSON.stringify(entry.key), JSON.stringify(entry.value));
      }
      const logs = fx.server.logs.join("\n");
      for (const secret of secrets) {
        assert.ok(!stored.some((text) => text.includes(secret)), "a secret in the store");
        assert.ok(!logs.includes(secret), "a secret in the log");
      }
    });

    await t.step("without offline_access the grant ends after 24 hours", async () => {
      let current = await tokensFor(fx, owner, client, BOTH);
      for (let i = 0; i < 3; i++) {
        fx.clock.advance(7 * 60 * 60 * 1000);
        current = (await refresh(fx, client, current.refresh_token)).json;
        assert.equal(typeof current.refresh_token, "string");
      }
      fx.clock.advance(3 * 60 * 60 * 1000 + 1);
      assert.equal((await refresh(fx, client, current.refresh_token)).json.error, "invalid_grant");
    });
    await t.step("with offline_access: 30 days idle", async () => {
      const first = await tokensFor(fx, owner, client, { scope: "app.access offline_access" });
      fx.clock.advance(29 * DAY);
      const kept = await refresh(fx, client, first.refresh_token);
      assert.equal(kept.status, 200);
      fx.clock.advance(30 * DAY + 1000);
      assert.equal(
        (await refresh(fx, client, kept.json.refresh_token)).json.error,
        "invalid_grant",
      );
    });
    await t.step("with offline_access: 90 days in all", async () => {
      // The browser session has lapsed by now; a fresh owner signs in.
      const fresh = await ownerBrowser(fx, "later@example.com");
      let current = await tokensFor(fx, fresh, client, { scope: "app.access offline_access" });
      for (let day = 25; day < 90; day += 25) {
        fx.clock.advance(25 * DAY);
        const next = await refresh(fx, client, current.refresh_token);
        assert.equal(next.status, 200, `day ${day}`);
        current = next.json;
      }
      fx.clock.advance(16 * DAY);
      assert.equal((await refresh(fx, client, current.refresh_token)).json.error, "invalid_grant");
    });
  } finally {
    await fx.close();
  }
});

Deno.test("revocation (RFC 7009)", async (t) => {
  const fx = await oauthFixture();
  const { verify } = fx;
  const revoke = (client: TestClient, tokenValue: unknown, hint?: string) => {
    const body = new URLSearchParams({ token: String(tokenValue), client_id: client.clientId });
    if (hint) body.set("token_type_hint", hint);
    return fetch(`${fx.auth}/api/auth/oauth2/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body,
    });
  };
  try {
    const client = await registerClient(fx);
    const other = await registerClient(fx, { client_name: "Other" });
    const owner = await ownerBrowser(fx, "owner@example.com");

    await t.step("revoking a refresh token ends its grant", async () => {
      const tokens = await tokensFor(fx, owner, client, BOTH);
      const answer = await revoke(client, tokens.refresh_token, "refresh_token");
      assert.equal(answer.status, 200);
      await answer.body?.cancel();
      assert.equal((await refresh(fx, client, tokens.refresh_token)).json.error, "invalid_grant");
      assert.equal((await verify(String(tokens.access_token))).ok, false);
    });
    await t.step("revoking an access token ends its grant", async () => {
      const tokens = await tokensFor(fx, owner, client, BOTH);
      const answer = await revoke(client, tokens.access_token);
      await answer.body?.cancel();
      assert.equal(answer.status, 200);
      assert.equal((await verify(String(tokens.access_token))).ok, false);
    });
    await t.step("another client's token is refused and stays valid", async () => {
      const tokens = await tokensFor(fx, owner, client, BOTH);
      const answer = await revoke(other, tokens.refresh_token);
      assert.equal(answer.status, 400);
      assert.equal((await answer.json()).error, "unauthorized_client");
      assert.equal((await verify(String(tokens.access_token))).ok, true);
    });
    await t.step("an unknown token is answered 200", async () => {
      const answer = await revoke(client, "never-issued");
      await answer.body?.cancel();
      assert.equal(answer.status, 200);
    });
    await t.step(
      "an unknown hint is unsupported_token_type; an unknown client invalid_client",
      async () => {
        const hinted = await revoke(client, "x", "id_token");
        assert.equal((await hinted.json()).error, "unsupported_token_type");
        const ghost = await revoke({ clientId: "ghost", redirectUri: "" }, "x");
        assert.equal(ghost.status, 401);
        assert.equal((await ghost.json()).error, "invalid_client");
      },
    );
  } finally {
    await fx.close();
  }
});
