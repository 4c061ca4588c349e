// The whole authorization code flow over HTTP, with the human steps done through the
// forms and the e-mail outbox.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { SCOPE_MEANINGS, SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { escapeHtml } from "../../../src/ui/html.ts";
import { Browser, followLink, hiddenField } from "../support/accounts_browser.ts";
import {
  authorizeParams,
  authorizeUrl,
  AWKWARD_STATE,
  consent,
  enabledScopes,
  exchange,
  jwtPayload,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
  tickedScopes,
} from "../support/oauth_helpers.ts";

Deno.test("authorization code flow", async (t) => {
  const fx = await oauthFixture();
  const { verify } = fx;
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");

    await t.step("signed out: sign in first, then back to the same request", async () => {
      const { params } = await authorizeParams(client);
      const url = authorizeUrl(fx, params);
      const browser = new Browser();
      const first = await browser.get(url);
      assert.equal(first.status, 302);
      const signIn = new URL(first.response.headers.get("Location")!);
      assert.equal(signIn.origin + signIn.pathname, `${fx.auth}/sign-in`);
      const returnTo = signIn.searchParams.get("return_to")!;
      assert.equal(`${fx.auth}${returnTo}`, url);
      const form = await browser.get(signIn.href);
      const sent = await browser.post(`${fx.auth}/sign-in`, {
        csrf: hiddenField(form.text, "csrf"),
        return_to: hiddenField(form.text, "return_to"),
        email: "owner@example.com",
      });
      assert.equal(sent.status, 200);
      const mail = (await fx.outbox.read()).at(-1)!;
      const back = await followLink(browser, mail.link);
      assert.equal(back.status, 303);
      assert.equal(back.response.headers.get("Location"), url);
      const page = await browser.get(url);
      assert.equal(page.status, 200);
      assert.match(page.text, /Allow access to Acme Bakery\?/);
    });

    let tokens: Record<string, unknown> = {};
    await t.step(
      "consent names client, registration, redirect host, business and scopes",
      async () => {
        const { params } = await authorizeParams(client, {
          scope: "app.access members.read billing.manage",
        });
        const page = await owner.get(authorizeUrl(fx, params));
        assert.equal(page.status, 200);
        assert.equal(page.response.headers.get("Cache-Control"), "no-store");
        assert.equal(page.response.headers.get("Access-Control-Allow-Origin"), null);
        assert.match(
          page.response.headers.get("Content-Security-Policy")!,
          /frame-ancestors 'none'/,
        );
        // Browsers apply form-action to the redirect that follows the consent post.
        assert.match(
          page.response.headers.get("Content-Security-Policy")!,
          /form-action 'self' https:\/\/client\.example\.com;/,
        );
        assert.match(page.text, /<dd id="client-name">Test Agent<\/dd>/);
        assert.match(page.text, /dynamic client registration/);
        assert.match(page.text, /<dd id="redirect-host"><code>client.example.com<\/code><\/dd>/);
        assert.equal(page.text.includes("redirect-warning"), false, "https goes elsewhere");
        assert.match(page.text, /<strong id="business-name">Acme Bakery<\/strong>/);
        assert.match(
          page.text,
          /<code>members.read<\/code>: view members and invitation delivery status/,
        );
        assert.match(
          page.text,
          /<code>billing.manage<\/code>: change the business subscription and payment details/,
        );
        assert.deepEqual(enabledScopes(page.text), [
          "app.access",
          "members.read",
          "billing.manage",
        ]);
        assert.match(
          page.text,
          /<code>billing.manage<\/code>: [^<]+<em class="mark" data-mark="owner-only">owner only<\/em>\s*<em class="mark" data-mark="money">spends money<\/em>\s*<\/span>/,
        );
        assert.match(page.text, /<code>members.read<\/code>: [^<]+<\/span>/, "no mark");
        assert.match(
          page.text,
          /<button type="submit" class="button primary" name="decision" value="allow"\s*>Allow</,
        );
        assert.match(
          page.text,
          /<button type="submit" class="button secondary" name="decision" value="deny"\s*>Deny</,
        );
      },
    );

    await t.step("a client returning to this computer comes with a warning", async () => {
      const local = await registerClient(fx, { redirect_uris: ["http://127.0.0.1:8976/cb"] });
      const { params } = await authorizeParams(local);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200);
      assert.match(page.text, /<dd id="redirect-host"><code>127.0.0.1:8976<\/code><\/dd>/);
      assert.match(
        page.text,
        /<p id="redirect-warning"><strong>It returns to this computer.<\/strong> Any program/,
      );
    });

    await t.step("each requested scope is listed with its meaning, app.access ticked", async () => {
      const { params } = await authorizeParams(client, { scope: SUPPORTED_SCOPES.join(" ") });
      const page = await owner.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200);
      // The spec's own words for the scope every client starts with.
      assert.ok(page.text.includes(
        "<code>app.access</code>: read workflows and business data; create, restart and " +
          "verify the agent connection test for the business",
      ));
      for (const scope of SUPPORTED_SCOPES) {
        assert.ok(
          page.text.includes(`<code>${scope}</code>: ${escapeHtml(SCOPE_MEANINGS[scope])}`),
          `${scope} and its meaning`,
        );
      }
      assert.deepEqual(enabledScopes(page.text), SUPPORTED_SCOPES);
      assert.deepEqual(tickedScopes(page.text), ["app.access"]);
    });

    await t.step("the consent form posted as shown grants app.access alone", async () => {
      const { params, verifier } = await authorizeParams(client, {
        scope: "openid offline_access app.access members.read billing.manage",
      });
      const page = await owner.get(authorizeUrl(fx, params));
      const location = await consent(owner, fx, authorizeUrl(fx, params), {
        scopes: tickedScopes(page.text),
      });
      const { status, json } = await exchange(
        fx,
        client,
        location.searchParams.get("code")!,
        verifier,
      );
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(json.scope, "app.access");
    });

    await t.step("aud is exactly the canonical resource, however it was spelled", async () => {
      const api = fx.server.apiUrl;
      const { code, verifier } = await obtainCode(owner, fx, client, { resource: `${api}/` });
      const first = await exchange(fx, client, code, verifier, {
        resource: api.replace("http://", "HTTP://"),
      });
      assert.equal(first.status, 200, JSON.stringify(first.json));
      assert.equal(jwtPayload(String(first.json.access_token)).aud, api);
      const next = await refresh(fx, client, first.json.refresh_token, { resource: `${api}/` });
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.equal(jwtPayload(String(next.json.access_token)).aud, api);
      assert.equal(jwtPayload(String(next.json.access_token)).iss, fx.issuer);
    });

    await t.step("allow redirects with code, state and iss; the code buys tokens", async () => {
      const { code, verifier, state, location } = await obtainCode(owner, fx, client, {
        scope: "app.access members.read",
      });
      assert.equal(location.origin + location.pathname, client.redirectUri);
      assert.equal(location.searchParams.get("state"), state);
      assert.equal(location.searchParams.get("iss"), fx.issuer);
      const { status, json, response } = await exchange(fx, client, code, verifier);
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      assert.equal(json.token_type, "Bearer");
      assert.equal(json.expires_in, 3600);
      assert.equal(json.scope, "app.access members.read");
      assert.equal(typeof json.refresh_token, "string");
      assert.equal(json.id_token, undefined, "no id_token without openid");
      const claims = jwtPayload(String(json.access_token));
      assert.equal(claims.iss, fx.issuer);
      assert.equal(claims.aud, fx.server.apiUrl);
      assert.equal(claims.client_id, client.clientId);
      assert.equal(claims.scope, "app.access members.read");
      for (const name of ["sub", "business", "gid", "jti"]) {
        assert.equal(typeof claims[name], "string");
      }
      const check = await verify(String(json.access_token));
      assert.equal(check.ok, true);
      tokens = json;
    });

    await t.step("the grant appears on /account", async () => {
      const account = await owner.get(`${fx.auth}/account`);
      assert.match(account.text, /Test Agent/);
      const claims = jwtPayload(String(tokens.access_token));
      assert.equal((await verify(String(tokens.access_token))).ok, true);
      assert.ok(account.text.includes(String(claims.gid)));
    });

    await t.step(
      "unticked scopes are not granted; the response reports the granted set",
      async () => {
        // A client this account has not granted yet: a first consent (a step-up keeps more).
        const first = await registerClient(fx);
        const { code, verifier } = await obtainCode(owner, fx, first, {
          scope: "app.access members.read triggers.read",
        }, { scopes: ["app.access", "triggers.read"] });
        const { json } = await exchange(fx, first, code, verifier);
        assert.equal(json.scope, "app.access triggers.read");
      },
    );

    await t.step("no scope requested: app.access is granted", async () => {
      const first = await registerClient(fx);
      const { code, verifier } = await obtainCode(owner, fx, first, { scope: "" });
      const { json } = await exchange(fx, first, code, verifier);
      assert.equal(json.scope, "app.access");
    });

    await t.step("deny redirects with access_denied, state and iss", async () => {
      const { params } = await authorizeParams(client);
      const location = await consent(owner, fx, authorizeUrl(fx, params), { decision: "deny" });
      assert.equal(location.searchParams.get("error"), "access_denied");
      assert.equal(location.searchParams.get("state"), params.state);
      assert.equal(location.searchParams.get("iss"), fx.issuer);
      assert.equal(location.searchParams.get("code"), null);
    });

    await t.step("state is echoed byte for byte on allow and on deny", async () => {
      const state = AWKWARD_STATE;
      for (const decision of ["allow", "deny"] as const) {
        const { params } = await authorizeParams(client, { state });
        const location = await consent(owner, fx, authorizeUrl(fx, params), { decision });
        const query = new URLSearchParams(location.search);
        assert.equal(query.get("state"), state, decision);
        assert.equal(query.getAll("state").length, 1, decision);
        assert.equal(query.get("iss"), fx.issuer, decision);
        assert.equal(query.has("code"), decision === "allow");
        assert.equal(query.get("error"), decision === "deny" ? "access_denied" : null);
      }
    });

    await t.step("openid: an id_token for the client, echoing the nonce", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client, {
        scope: "openid email app.access",
        nonce: "n-0S6_WzA2Mj",
      });
      const { json } = await exchange(fx, client, code, verifier);
      const id = jwtPayload(String(json.id_token));
      assert.equal(id.iss, fx.issuer);
      assert.equal(id.aud, client.clientId);
      assert.equal(id.nonce, "n-0S6_WzA2Mj");
      assert.equal(id.email, "owner@example.com");
      assert.equal(id.sub, jwtPayload(String(json.access_token)).sub);
    });

    await t.step("a replayed code is refused and revokes what it issued", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client);
      const first = await exchange(fx, client, code, verifier);
      assert.equal(first.status, 200);
      assert.equal((await verify(String(first.json.access_token))).ok, true);
      const again = await exchange(fx, client, code, verifier);
      assert.equal(again.status, 400);
      assert.equal(again.json.error, "invalid_grant");
      assert.match(String(again.json.error_description), /already used/);
      assert.equal((await verify(String(first.json.access_token))).ok, false);
      const refreshed = await refresh(fx, client, first.json.refresh_token);
      assert.equal(refreshed.json.error, "invalid_grant", "its refresh token died too");
    });
  } finally {
    await fx.close();
  }
});

Deno.test("business selection and member consent", async (t) => {
  const fx = await oauthFixture();
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "boss@example.com", "North Shop", "South Shop");

    await t.step("two businesses: a choice with field business; the token carries it", async () => {
      const { params } = await authorizeParams(client);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.match(page.text, /Choose a business/);
      assert.match(page.text, /name="business" value="[^"]+"[^>]*> <span>North Shop/);
      assert.match(page.text, /name="business" value="[^"]+"[^>]*> <span>South Shop/);
      const { code, verifier } = await obtainCode(owner, fx, client, {}, {
        business: "South Shop",
      });
      const { json } = await exchange(fx, client, code, verifier);
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      const business = await accounts.getBusiness(
        String(jwtPayload(String(json.access_token)).business),
      );
      assert.equal(business?.name, "South Shop");
    });

    await t.step("the business survives prompt=consent and every refresh", async () => {
      const { code, verifier } = await obtainCode(owner, fx, client, { prompt: "consent" }, {
        business: "South Shop",
      });
      const { status, json } = await exchange(fx, client, code, verifier);
      assert.equal(status, 200, JSON.stringify(json));
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      const south = String(jwtPayload(String(json.access_token)).business);
      assert.equal((await accounts.getBusiness(south))?.name, "South Shop");
      let refreshToken = json.refresh_token;
      for (let i = 0; i < 2; i++) {
        const next = await refresh(fx, client, refreshToken);
        assert.equal(next.status, 200, JSON.stringify(next.json));
        assert.equal(jwtPayload(String(next.json.access_token)).business, south);
        refreshToken = next.json.refresh_token;
      }
    });

    await t.step(
      "one client granted in both businesses: each refresh keeps its own grant's business",
      async () => {
        const accounts = createAccounts(fx.server.store, fx.clock.now);
        const refreshTokens = new Map<string, string>();
        for (const name of ["North Shop", "South Shop"]) {
          const { code, verifier } = await obtainCode(owner, fx, client, { prompt: "consent" }, {
            business: name,
          });
          const { status, json } = await exchange(fx, client, code, verifier);
          assert.equal(status, 200, JSON.stringify(json));
          refreshTokens.set(name, String(json.refresh_token));
        }
        for (const [name, refreshToken] of refreshTokens) {
          const next = await refresh(fx, client, refreshToken);
          assert.equal(next.status, 200, JSON.stringify(next.json));
          const business = await accounts.getBusiness(
            String(jwtPayload(String(next.json.access_token)).business),
          );
          assert.equal(business?.name, name, "the refresh of the " + name + " grant");
        }
      },
    );
    await t.step(
      "with prompt=consent the decision cannot move to another of the account's businesses",
      async () => {
        const consentUrl = `${fx.auth}/api/auth/oauth2/consent`;
        const { params } = await authorizeParams(client, { prompt: "consent" });
        const choice = await owner.get(authorizeUrl(fx, params));
        const south = choice.text.match(
          /name="business" value="([^"]+)"[^>]*> <span>South Shop/,
        )![1]!;
        const north = choice.text.match(
          /name="business" value="([^"]+)"[^>]*> <span>North Shop/,
        )![1]!;
        const page = await owner.post(consentUrl, {
          txn: hiddenField(choice.text, "txn"),
          csrf: hiddenField(choice.text, "csrf"),
          business: north,
        });
        assert.match(page.text, /Allow more access to North Shop\?/);
        const answer = await owner.post(consentUrl, {
          txn: hiddenField(page.text, "txn"),
          csrf: hiddenField(page.text, "csrf"),
          business: south,
          scope: "app.access",
          decision: "allow",
        });
        assert.equal(answer.status, 400, "no code for South Shop");
        assert.match(answer.text, /business cannot be changed/);
      },
    );

    await t.step("a member sees owner-only scopes disabled with the reason", async () => {
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      const boss = await accounts.findAccountByEmail("boss@example.com");
      const [north] = await accounts.listBusinessesOf(boss!.id);
      await accounts.addMember(north!.business.id, "clerk@example.com", "member");
      const clerk = new Browser();
      const form = await clerk.get(`${fx.auth}/sign-in`);
      await clerk.post(`${fx.auth}/sign-in`, {
        csrf: hiddenField(form.text, "csrf"),
        email: "clerk@example.com",
      });
      await followLink(clerk, (await fx.outbox.read()).at(-1)!.link);
      const { params } = await authorizeParams(client, { scope: "app.access billing.manage" });
      const page = await clerk.get(authorizeUrl(fx, params));
      assert.match(page.text, /Allow access to North Shop\?/);
      assert.match(page.text, /name="scope" value="billing.manage"\s+disabled>/);
      assert.match(page.text, /Only an owner of the business can grant this permission/);
      assert.deepEqual(enabledScopes(page.text), ["app.access"]);
      const location = await consent(clerk, fx, authorizeUrl(fx, params));
      assert.ok(location.searchParams.get("code"));
    });
  } finally {
    await fx.close();
  }
});
