// The token endpoint: code exchange rules, client authentication, request hygiene.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import {
  exchange,
  jwtPayload,
  type OAuthFixture,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  pkce,
  refresh,
  registerClient,
  type TestClient,
  token,
} from "../support/oauth_helpers.ts";

Deno.test("token endpoint: authorization_code", async (t) => {
  const fx = await oauthFixture();
  const { verify } = fx;
  try {
    const client = await registerClient(fx);
    const other = await registerClient(fx, { client_name: "Other" });
    const owner = await ownerBrowser(fx, "owner@example.com");

    await t.step("a wrong verifier is invalid_grant and burns the code", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client);
      const wrong = await exchange(fx, client, code, "x".repeat(43));
      assert.equal(wrong.status, 400);
      assert.equal(wrong.response.headers.get("Cache-Control"), "no-store");
      assert.deepEqual(wrong.json, {
        error: "invalid_grant",
        error_description: "code_verifier does not match the code_challenge",
      });
      await assertBurned(fx, client, code, verifier);
    });
    await t.step(
      "the code_challenge as the verifier is invalid_grant and burns the code",
      async () => {
        // S256 only: under "plain" the challenge would be the verifier.
        const { verifier, challenge } = await pkce();
        const { code } = await obtainCode(owner, fx, client, { code_challenge: challenge });
        const plain = await exchange(fx, client, code, challenge);
        assert.equal(plain.status, 400);
        assert.deepEqual(plain.json, {
          error: "invalid_grant",
          error_description: "code_verifier does not match the code_challenge",
        });
        await assertBurned(fx, client, code, verifier);
      },
    );
    await t.step(
      "a missing or malformed verifier is invalid_grant and burns the code",
      async () => {
        for (const bad of [null, "short", "é".repeat(43)]) {
          const { code, verifier } = await obtainCode(owner, fx, client);
          const fields: Record<string, string> = {
            grant_type: "authorization_code",
            code,
            redirect_uri: client.redirectUri,
            client_id: client.clientId,
          };
          if (bad !== null) fields.code_verifier = bad;
          const answer = await token(fx, fields);
          assert.equal(answer.json.error, "invalid_grant");
          assert.match(String(answer.json.error_description), /code_verifier is required/);
          const late = await exchange(fx, client, code, verifier);
          assert.match(String(late.json.error_description), /unknown or has expired/);
        }
      },
    );
    await t.step("a code used by another client", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client);
      const stolen = await exchange(fx, other, code, verifier, {
        redirect_uri: client.redirectUri,
      });
      assert.deepEqual(stolen.json, {
        error: "invalid_grant",
        error_description: "The authorization code was issued to another client",
      });
      assert.equal((await exchange(fx, client, code, verifier)).json.error, "invalid_grant");
    });
    await t.step("another redirect_uri, or none", async () => {
      for (const redirect of ["https://client.example.com/other", null]) {
        const { code, verifier } = await obtainCode(owner, fx, client);
        const fields: Record<string, string> = {
          grant_type: "authorization_code",
          code,
          client_id: client.clientId,
          code_verifier: verifier,
        };
        if (redirect !== null) fields.redirect_uri = redirect;
        const answer = await token(fx, fields);
        assert.equal(answer.json.error, "invalid_grant");
        assert.match(String(answer.json.error_description), /redirect_uri must equal/);
      }
    });
    await t.step(
      "resource: missing is fine; different, with a path or fragment is invalid_target",
      async () => {
        const { code, verifier } = await obtainCode(owner, fx, client);
        const fine = await exchange(fx, client, code, verifier, {
          resource: `${fx.server.apiUrl}/`,
        });
        assert.equal(fine.status, 200);
        for (
          const resource of [
            "https://other.example",
            `${fx.server.apiUrl}/api/mcp`,
            `${fx.server.apiUrl}#f`,
          ]
        ) {
          const { code, verifier } = await obtainCode(owner, fx, client);
          const answer = await exchange(fx, client, code, verifier, { resource });
          assert.equal(answer.status, 400);
          assert.equal(answer.json.error, "invalid_target");
        }
        const twice = await obtainCode(owner, fx, client);
        const doubled = await fetch(`${fx.auth}/api/auth/oauth2/token`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams([
            ["grant_type", "authorization_code"],
            ["code", twice.code],
            ["redirect_uri", client.redirectUri],
            ["client_id", client.clientId],
            ["code_verifier", twice.verifier],
            ["resource", fx.server.apiUrl],
            ["resource", fx.server.apiUrl],
          ]),
        });
        assert.equal((await doubled.json()).error, "invalid_target");
        const { code: c2, verifier: v2 } = await obtainCode(owner, fx, client);
        const omitted = await token(fx, {
          grant_type: "authorization_code",
          code: c2,
          redirect_uri: client.redirectUri,
          client_id: client.clientId,
          code_verifier: v2,
        });
        assert.equal(omitted.status, 200);
      },
    );
    await t.step("a code after its 60 seconds", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client);
      fx.clock.advance(61_000);
      const late = await exchange(fx, client, code, verifier);
      assert.equal(late.json.error, "invalid_grant");
    });
    await t.step(
      "a code used concurrently: at most one success, and its grant is revoked",
      async () => {
        const { code, verifier } = await obtainCode(owner, fx, client);
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => exchange(fx, client, code, verifier)),
        );
        const wins = answers.filter((a) => a.status === 200);
        assert.ok(wins.length <= 1);
        assert.ok(answers.some((a) => a.json.error === "invalid_grant"));
        for (const win of wins) {
          assert.equal((await verify(String(win.json.access_token))).ok, false);
        }
      },
    );
    await t.step(
      "a code whose account left the business in the meantime buys nothing",
      async () => {
        const leaver = await ownerBrowser(fx, "leaver@example.com", "Leaving Ltd");
        const { code, verifier } = await obtainCode(leaver, fx, client);
        const accounts = createAccounts(fx.server.store, fx.clock.now);
        const account = (await accounts.findAccountByEmail("leaver@example.com"))!;
        const [membership] = await accounts.listBusinessesOf(account.id);
        await accounts.removeMember(membership!.business.id, account.id);
        const answer = await exchange(fx, client, code, verifier);
        assert.equal(answer.status, 400);
        assert.equal(answer.json.error, "invalid_grant");
        assert.equal(answer.json.access_token, undefined);
      },
    );
    await t.step(
      "a code whose account was demoted in the meantime buys only what a member may hold",
      async () => {
        const boss = await ownerBrowser(fx, "briefly-owner@example.com", "Demotion Ltd");
        const { code, verifier } = await obtainCode(boss, fx, client, {
          scope: "app.access billing.manage",
        });
        const accounts = createAccounts(fx.server.store, fx.clock.now);
        const account = (await accounts.findAccountByEmail("briefly-owner@example.com"))!;
        const [membership] = await accounts.listBusinessesOf(account.id);
        await accounts.addMember(membership!.business.id, account.email, "member");
        const answer = await exchange(fx, client, code, verifier);
        assert.equal(answer.status, 200, JSON.stringify(answer.json));
        assert.equal(answer.json.scope, "app.access");
        assert.equal(jwtPayload(String(answer.json.access_token)).scope, "app.access");
      },
    );
    await t.step("unknown client is invalid_client (401)", async () => {
      const answer = await token(fx, {
        grant_type: "authorization_code",
        code: "x",
        client_id: "ghost",
      });
      assert.equal(answer.status, 401);
      assert.equal(answer.json.error, "invalid_client");
      assert.equal(answer.response.headers.get("Cache-Control"), "no-store");
    });
    await t.step("unsupported and missing grant_type", async () => {
      const password = await token(fx, { grant_type: "password", client_id: client.clientId });
      assert.equal(password.json.error, "unsupported_grant_type");
      const none = await token(fx, { client_id: client.clientId });
      assert.equal(none.json.error, "invalid_request");
    });
    await t.step("request hygiene: content type, repeats, size, bad encoding", async () => {
      const url = `${fx.auth}/api/auth/oauth2/token`;
      const json = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      assert.equal(json.status, 400);
      assert.equal((await json.json()).error, "invalid_request");
      const repeated = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `grant_type=authorization_code&code=a&code=b&client_id=${client.clientId}`,
      });
      assert.deepEqual(await repeated.json(), {
        error: "invalid_request",
        error_description: 'Parameter "code" is repeated',
      });
      const huge = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "code=" + "a".repeat(20_000),
      });
      assert.equal(huge.status, 413);
      assert.equal(huge.headers.get("Cache-Control"), "no-store");
      assert.equal((await huge.json()).error, "invalid_request");
      const binary = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new Uint8Array([0xff, 0xfe, 0x00]),
      });
      assert.equal(binary.status, 400);
      await binary.body?.cancel();
      const get = await fetch(url);
      await get.body?.cancel();
      assert.equal(get.status, 405);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("token endpoint: confidential clients and refresh registration", async (t) => {
  const fx = await oauthFixture();
  try {
    const owner = await ownerBrowser(fx, "owner@example.com");
    await t.step("a wrong secret, a missing one, or two methods at once are refused", async () => {
      const client = await registerClient(fx, {
        token_endpoint_auth_method: "client_secret_basic",
      });
      assert.ok(client.secret);
      const basic = "Basic " + btoa(`${client.clientId}:${client.secret}`);
      const { code, verifier } = await obtainCode(owner, fx, client);
      const fields = {
        grant_type: "authorization_code",
        code,
        redirect_uri: client.redirectUri,
        code_verifier: verifier,
      };
      const wrong = await token(fx, fields, {
        Authorization: "Basic " + btoa(`${client.clientId}:nope`),
      });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.json.error, "invalid_client");
      assert.match(wrong.response.headers.get("WWW-Authenticate")!, /^Basic/);
      const none = await token(fx, { ...fields, client_id: client.clientId });
      assert.equal(none.status, 401);
      const both = await token(fx, { ...fields, client_secret: client.secret! }, {
        Authorization: basic,
      });
      assert.equal(both.json.error, "invalid_request");
      const ok = await token(fx, fields, { Authorization: basic });
      assert.equal(ok.status, 200, JSON.stringify(ok.json));
    });
    await t.step("a public client presenting a secret is refused", async () => {
      const client = await registerClient(fx);
      const answer = await token(fx, {
        grant_type: "authorization_code",
        code: "x",
        client_id: client.clientId,
        client_secret: "guess",
      });
      assert.equal(answer.json.error, "invalid_client");
    });
    await t.step("no refresh token for a client not registered for refresh_token", async () => {
      const client = await registerClient(fx, { grant_types: ["authorization_code"] });
      const { code, verifier } = await obtainCode(owner, fx, client, {
        scope: "app.access offline_access",
      });
      const { json } = await exchange(fx, client, code, verifier);
      assert.equal(json.refresh_token, undefined);
      const refused = await refresh(fx, client, "anything");
      assert.equal(refused.json.error, "unauthorized_client");
    });
  } finally {
    await fx.close();
  }
});

Deno.test("token endpoint: the registered authentication method is the only one", async (t) => {
  const fx = await oauthFixture();
  try {
    const owner = await ownerBrowser(fx, "owner@example.com");
    const methods = ["client_secret_basic", "client_secret_post", "none"] as const;
    // How each method presents the client; a public client has no secret, so it guesses one.
    const present = (method: (typeof methods)[number], client: TestClient) => {
      const secret = client.secret ?? "guess";
      if (method === "client_secret_basic") {
        return {
          fields: {},
          headers: { Authorization: "Basic " + btoa(`${client.clientId}:${secret}`) },
        };
      }
      if (method === "client_secret_post") {
        return { fields: { client_id: client.clientId, client_secret: secret }, headers: {} };
      }
      return { fields: { client_id: client.clientId }, headers: {} };
    };
    for (const registered of methods) {
      await t.step(`registered ${registered}`, async () => {
        const client = await registerClient(fx, { token_endpoint_auth_method: registered });
        const { code, verifier } = await obtainCode(owner, fx, client);
        const grant = {
          grant_type: "authorization_code",
          code,
          redirect_uri: client.redirectUri,
          code_verifier: verifier,
        };
        // The refused methods first: refused before the code is looked at, so it stays usable.
        for (const used of [...methods.filter((m) => m !== registered), registered]) {
          const { fields, headers } = present(used, client);
          const answer = await token(fx, { ...grant, ...fields }, headers);
          if (used === registered) {
            assert.equal(answer.status, 200, JSON.stringify(answer.json));
            continue;
          }
          assert.equal(answer.status, 401, `${used}: ${JSON.stringify(answer.json)}`);
          assert.equal(answer.json.error, "invalid_client", used);
          assert.match(String(answer.json.error_description), new RegExp(registered), used);
          // RFC 6749 §5.2: a Basic attempt gets the Basic challenge; so does a client
          // registered for Basic (the 401 names the scheme it supports).
          const challenge = used === "client_secret_basic" || registered === "client_secret_basic";
          assert.equal(
            answer.response.headers.get("WWW-Authenticate"),
            challenge ? 'Basic realm="vestibule"' : null,
            used,
          );
        }
      });
    }
  } finally {
    await fx.close();
  }
});

Deno.test("with rate limits switched off, token and registration answer every request", async () => {
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "off" });
  try {
    // registerClient asserts 201 each time: past the default 20 a minute.
    for (let i = 0; i < 30; i++) await registerClient(fx);
    const client = await registerClient(fx);
    for (let i = 0; i < 130; i++) {
      const answer = await token(fx, {
        grant_type: "authorization_code",
        code: "x",
        client_id: client.clientId,
      });
      assert.equal(answer.status, 400, `attempt ${i}`);
    }
  } finally {
    await fx.close();
  }
});

/** The code was burned: the right verifier no longer exchanges it. */
async function assertBurned(
  fx: OAuthFixture,
  client: TestClient,
  code: string,
  verifier: string,
): Promise<void> {
  const right = await exchange(fx, client, code, verifier);
  assert.equal(right.json.error, "invalid_grant");
  assert.match(String(right.json.error_description), /unknown or has expired/);
}
