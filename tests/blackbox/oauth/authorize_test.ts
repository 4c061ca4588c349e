// The authorization endpoint's rules and the attacks on it and on the consent form.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { Browser, followLink, hiddenField } from "../support/accounts_browser.ts";
import {
  authorizeParams,
  authorizeUrl,
  AWKWARD_STATE,
  type OAuthFixture,
  oauthFixture,
  ownerBrowser,
  pkce,
  postForm,
  registerClient,
  type TestClient,
} from "../support/oauth_helpers.ts";

Deno.test("authorize: errors before the client is known are shown, never redirected", async (t) => {
  const fx = await oauthFixture();
  try {
    const client = await registerClient(fx, {
      redirect_uris: ["https://client.example.com/callback?tenant=1"],
    });
    const loopback = await registerClient(fx, { redirect_uris: ["http://127.0.0.1/cb"] });
    const owner = await ownerBrowser(fx, "owner@example.com");
    const base = (await authorizeParams(client)).params;
    const cases: [string, Record<string, string | null>, RegExp][] = [
      ["missing client_id", { client_id: null }, /client_id is required/],
      ["unknown client_id", { client_id: "nope" }, /Unknown client_id/],
      ["missing redirect_uri", { redirect_uri: null }, /redirect_uri is required/],
      [
        "another host (open redirect)",
        { redirect_uri: "https://evil.example/callback?tenant=1" },
        /not registered/,
      ],
      [
        "another path",
        { redirect_uri: "https://client.example.com/other?tenant=1" },
        /not registered/,
      ],
      [
        "another query",
        { redirect_uri: "https://client.example.com/callback?tenant=2" },
        /not registered/,
      ],
      ["no query", { redirect_uri: "https://client.example.com/callback" }, /not registered/],
      [
        "another case",
        { redirect_uri: "https://client.example.com/Callback?tenant=1" },
        /not registered/,
      ],
      [
        "a port",
        { redirect_uri: "https://client.example.com:8443/callback?tenant=1" },
        /not registered/,
      ],
      [
        "a fragment",
        { redirect_uri: "https://client.example.com/callback?tenant=1#x" },
        /not registered/,
      ],
      [
        "userinfo",
        { redirect_uri: "https://client.example.com@evil.example/callback?tenant=1" },
        /not registered/,
      ],
    ];
    for (const [name, change, message] of cases) {
      await t.step(name, async () => {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries({ ...base, ...change })) {
          if (v !== null) params.set(k, v);
        }
        const page = await owner.get(`${fx.auth}/api/auth/oauth2/authorize?${params}`);
        assert.equal(page.status, 400);
        assert.equal(page.response.headers.get("Location"), null);
        assert.match(page.response.headers.get("Content-Type")!, /text\/html/);
        assert.match(
          page.response.headers.get("Content-Security-Policy")!,
          /frame-ancestors 'none'/,
        );
        assert.match(page.text, message);
      });
    }
    await t.step("repeated client_id or redirect_uri", async () => {
      for (const name of ["client_id", "redirect_uri"]) {
        const params = new URLSearchParams(base);
        params.append(name, base[name]!);
        const page = await owner.get(`${fx.auth}/api/auth/oauth2/authorize?${params}`);
        assert.equal(page.status, 400);
        assert.match(page.text, new RegExp(`${name} is repeated`));
      }
    });
    await t.step("loopback http: any port, but path and host stay exact", async () => {
      const ok =
        (await authorizeParams(loopback, { redirect_uri: "http://127.0.0.1:51234/cb" })).params;
      assert.equal((await owner.get(authorizeUrl(fx, ok))).status, 200);
      const bad =
        (await authorizeParams(loopback, { redirect_uri: "http://127.0.0.1:51234/cb2" })).params;
      assert.equal((await owner.get(authorizeUrl(fx, bad))).status, 400);
      const other =
        (await authorizeParams(loopback, { redirect_uri: "http://localhost:51234/cb" })).params;
      assert.equal((await owner.get(authorizeUrl(fx, other))).status, 400);
      const noPort =
        (await authorizeParams(loopback, { redirect_uri: "http://127.0.0.1:65536/cb" })).params;
      assert.equal((await owner.get(authorizeUrl(fx, noPort))).status, 400);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("authorize: errors after validation go back with error, state and iss", async (t) => {
  const fx = await oauthFixture();
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    const api = fx.server.apiUrl;
    const { challenge } = await pkce();
    const cases: [string, Record<string, string | null>, string, RegExp?][] = [
      [
        "missing PKCE",
        { code_challenge: null, code_challenge_method: null },
        "invalid_request",
        /code_challenge is required/,
      ],
      [
        "a method without a challenge",
        { code_challenge: null },
        "invalid_request",
        /code_challenge is required/,
      ],
      [
        "plain PKCE",
        { code_challenge: challenge, code_challenge_method: "plain" },
        "invalid_request",
        /"plain" is not supported/,
      ],
      [
        "missing method",
        { code_challenge_method: null },
        "invalid_request",
        /code_challenge_method is required/,
      ],
      ["malformed challenge", { code_challenge: "short" }, "invalid_request", /base64url SHA-256/],
      ["response_type token", { response_type: "token" }, "unsupported_response_type"],
      ["missing response_type", { response_type: null }, "invalid_request"],
      ["unknown scope", { scope: "app.access root" }, "invalid_scope", /"root"/],
      ["resource with a path", { resource: `${api}/api/mcp` }, "invalid_target"],
      ["resource with a fragment", { resource: `${api}/#x` }, "invalid_target"],
      ["resource with a query", { resource: `${api}/?a=1` }, "invalid_target"],
      ["resource on another host", { resource: "https://api.evil.example" }, "invalid_target"],
      ["resource with userinfo", { resource: api.replace("://", "://u@") }, "invalid_target"],
      ["unknown prompt", { prompt: "sideways" }, "invalid_request"],
    ];
    for (const [name, change, error, description] of cases) {
      await t.step(name, async () => {
        const { params: base } = await authorizeParams(client);
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries({ ...base, ...change })) {
          if (v !== null) params.set(k, v);
        }
        const answer = await owner.get(`${fx.auth}/api/auth/oauth2/authorize?${params}`);
        assert.equal(answer.status, 302, answer.text);
        const location = new URL(answer.response.headers.get("Location")!);
        assert.equal(location.origin + location.pathname, client.redirectUri);
        assert.equal(location.searchParams.get("error"), error);
        assert.equal(location.searchParams.get("state"), base.state);
        assert.equal(location.searchParams.get("iss"), fx.issuer);
        if (description) assert.match(location.searchParams.get("error_description")!, description);
      });
    }
    await t.step(
      "a second resource value is invalid_target; other repeats invalid_request",
      async () => {
        const { params: base } = await authorizeParams(client);
        const twice = new URLSearchParams({ ...base, resource: api });
        twice.append("resource", api);
        let location = new URL(
          (await owner.get(`${fx.auth}/api/auth/oauth2/authorize?${twice}`)).response.headers.get(
            "Location",
          )!,
        );
        assert.equal(location.searchParams.get("error"), "invalid_target");
        const scope = new URLSearchParams(base);
        scope.append("scope", "app.access");
        location = new URL(
          (await owner.get(`${fx.auth}/api/auth/oauth2/authorize?${scope}`)).response.headers.get(
            "Location",
          )!,
        );
        assert.equal(location.searchParams.get("error"), "invalid_request");
        assert.match(location.searchParams.get("error_description")!, /"scope" is repeated/);
      },
    );
    await t.step("equivalent spellings of the resource are accepted", async () => {
      for (const resource of [api, `${api}/`, api.replace("http://", "HTTP://")]) {
        const { params } = await authorizeParams(client, { resource });
        const page = await owner.get(authorizeUrl(fx, params));
        assert.equal(page.status, 200, `${resource}: ${page.response.headers.get("Location")}`);
      }
    });
    await t.step("state is echoed byte for byte", async () => {
      const state = "a b+c/d?e=f&g=%20ü😀";
      const { params } = await authorizeParams(client, { state, response_type: "token" });
      const answer = await owner.get(authorizeUrl(fx, params));
      const location = new URL(answer.response.headers.get("Location")!);
      assert.equal(location.searchParams.get("state"), state);
    });
    await t.step("prompt=none: login_required signed out, consent_required signed in", async () => {
      const { params } = await authorizeParams(client, { prompt: "none" });
      const out = await new Browser().get(authorizeUrl(fx, params));
      assert.equal(
        new URL(out.response.headers.get("Location")!).searchParams.get("error"),
        "login_required",
      );
      const signedIn = await owner.get(authorizeUrl(fx, params));
      const location = new URL(signedIn.response.headers.get("Location")!);
      assert.equal(location.searchParams.get("error"), "consent_required");
      assert.equal(location.searchParams.get("iss"), fx.issuer);
    });
    await t.step("an account left with no business: access_denied, state and iss", async () => {
      const { accounts, businessId, accountId, browser: former } = await signedInMember(
        fx,
        "former@example.com",
      );
      await accounts.removeMember(businessId, accountId);
      assert.deepEqual(await accounts.listBusinessesOf(accountId), []);
      const { params } = await authorizeParams(client, { state: AWKWARD_STATE });
      const answer = await former.get(authorizeUrl(fx, params));
      assert.equal(answer.status, 302, answer.text);
      assertErrorRedirect(fx, client, answer.response, {
        error: "access_denied",
        description: "The signed-in account has no business",
        state: AWKWARD_STATE,
      });
    });
    await t.step("a private-use scheme redirect gets its code, and the CSP allows it", async () => {
      const native = await registerClient(fx, {
        redirect_uris: ["com.example.app:/oauth2redirect"],
      });
      const { params } = await authorizeParams(native);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.match(
        page.response.headers.get("Content-Security-Policy")!,
        /form-action 'self' com\.example\.app:;/,
      );
      const body = new URLSearchParams({
        txn: hiddenField(page.text, "txn"),
        csrf: hiddenField(page.text, "csrf"),
        scope: "app.access",
        decision: "allow",
      });
      const answer = await postForm(owner, `${fx.auth}/api/auth/oauth2/consent`, body);
      assert.equal(answer.status, 303);
      const location = answer.response.headers.get("Location")!;
      assert.match(location, /^com\.example\.app:\/oauth2redirect\?code=[A-Za-z0-9_-]{43}&state=/);
      assert.equal(new URL(location).searchParams.get("iss"), fx.issuer);
    });
    await t.step("the authorization endpoint never answers CORS", async () => {
      const { params } = await authorizeParams(client);
      const response = await fetch(authorizeUrl(fx, params), {
        headers: { Origin: "https://evil.example" },
        redirect: "manual",
      });
      await response.body?.cancel();
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), null);
      const preflight = await fetch(authorizeUrl(fx, params), {
        method: "OPTIONS",
        headers: { Origin: fx.auth, "Access-Control-Request-Method": "GET" },
      });
      await preflight.body?.cancel();
      assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), null);
    });
    await t.step("the consent form, part of that endpoint, never answers CORS either", async () => {
      const consentUrl = `${fx.auth}/api/auth/oauth2/consent`;
      for (const origin of ["https://evil.example", fx.auth]) {
        const { params } = await authorizeParams(client);
        const page = await owner.get(authorizeUrl(fx, params));
        const body = new URLSearchParams({
          txn: hiddenField(page.text, "txn"),
          csrf: hiddenField(page.text, "csrf"),
          scope: "app.access",
          decision: "allow",
        });
        const answer = await postForm(owner, consentUrl, body, { Origin: origin });
        assert.equal(answer.status, 303, answer.text);
        assert.deepEqual(corsHeaders(answer.response), [], `POST from ${origin}`);
        const preflight = await fetch(consentUrl, {
          method: "OPTIONS",
          headers: {
            Origin: origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
          },
        });
        await preflight.body?.cancel();
        assert.deepEqual(corsHeaders(preflight), [], `OPTIONS from ${origin}`);
      }
    });
  } finally {
    await fx.close();
  }
});

Deno.test("consent form attacks", async (t) => {
  const fx = await oauthFixture();
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");
    const consentUrl = `${fx.auth}/api/auth/oauth2/consent`;
    const open = async (scope = "app.access members.read", extra: Record<string, string> = {}) => {
      const { params } = await authorizeParams(client, { scope, ...extra });
      const page = await owner.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200);
      return { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
    };
    const decide = (
      fields: Record<string, string>,
      scopes: string[] = ["app.access"],
      who = owner,
    ) => {
      const body = new URLSearchParams(fields);
      for (const s of scopes) body.append("scope", s);
      return postForm(who, consentUrl, body);
    };

    await t.step("without a CSRF token", async () => {
      const { txn } = await open();
      const answer = await decide({ txn, decision: "allow" });
      assert.equal(answer.status, 403);
      assert.match(answer.text, /security token/);
    });
    await t.step("with a wrong CSRF token", async () => {
      const { txn } = await open();
      assert.equal((await decide({ txn, csrf: "forged", decision: "allow" })).status, 403);
    });
    await t.step("a replayed consent (same form twice) fails the second time", async () => {
      const form = await open();
      const first = await decide({ ...form, decision: "allow" });
      assert.equal(first.status, 303);
      const second = await decide({ ...form, decision: "allow" });
      assert.equal(second.status, 400);
      assert.match(second.text, /already answered/);
    });
    await t.step("two concurrent decisions: exactly one code", async () => {
      const form = await open();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => decide({ ...form, decision: "allow" })),
      );
      assert.equal(answers.filter((a) => a.status === 303).length, 1);
    });
    await t.step("a forged business field is refused", async () => {
      const form = await open();
      const answer = await decide({ ...form, business: "someone-elses", decision: "allow" });
      assert.equal(answer.status, 400);
      assert.match(answer.text, /business cannot be changed/);
    });
    await t.step("every scope unticked: access_denied, state and iss", async () => {
      const form = await open("app.access members.read", { state: AWKWARD_STATE });
      const answer = await decide({ ...form, decision: "allow" }, []);
      assert.equal(answer.status, 303, answer.text);
      assertErrorRedirect(fx, client, answer.response, {
        error: "access_denied",
        description: "No permission was granted",
        state: AWKWARD_STATE,
      });
    });
    await t.step("removed from the business before answering: access_denied", async () => {
      const { accounts, businessId, accountId, browser: leaver } = await signedInMember(
        fx,
        "leaver@example.com",
      );
      const { params } = await authorizeParams(client, { state: AWKWARD_STATE });
      const page = await leaver.get(authorizeUrl(fx, params));
      assert.match(page.text, /Allow access to Acme Bakery\?/);
      const fields = { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
      await accounts.removeMember(businessId, accountId);
      const answer = await decide({ ...fields, decision: "allow" }, ["app.access"], leaver);
      assert.equal(answer.status, 303, answer.text);
      assertErrorRedirect(fx, client, answer.response, {
        error: "access_denied",
        description: "Not a member of the business",
        state: AWKWARD_STATE,
      });
    });
    await t.step("a scope the client did not request is refused", async () => {
      const form = await open("app.access");
      const answer = await decide({ ...form, decision: "allow" }, ["app.access", "billing.manage"]);
      assert.equal(answer.status, 400);
      assert.match(answer.text, /was not requested/);
    });
    await t.step("another session cannot answer someone's transaction", async () => {
      const form = await open();
      const intruder = await ownerBrowser(fx, "intruder@example.com", "Intruder Ltd");
      const { params } = await authorizeParams(client);
      const own = await intruder.get(authorizeUrl(fx, params));
      const csrf = hiddenField(own.text, "csrf");
      const answer = await decide(
        { txn: form.txn, csrf, decision: "allow" },
        ["app.access"],
        intruder,
      );
      assert.equal(answer.status, 400);
    });
    await t.step("signed out: nothing is decided", async () => {
      const form = await open();
      const answer = await decide({ ...form, decision: "allow" }, ["app.access"], new Browser());
      assert.equal(answer.status, 400);
      assert.match(answer.text, /signed out/);
    });
    await t.step("a business the account is not a member of cannot be chosen", async () => {
      const multi = await ownerBrowser(fx, "multi@example.com", "One", "Two");
      const { params } = await authorizeParams(client);
      const page = await multi.get(authorizeUrl(fx, params));
      assert.match(page.text, /Choose a business/);
      assert.match(page.response.headers.get("Content-Security-Policy")!, /frame-ancestors 'none'/);
      const answer = await postForm(
        multi,
        consentUrl,
        new URLSearchParams({
          txn: hiddenField(page.text, "txn"),
          csrf: hiddenField(page.text, "csrf"),
          business: "not-mine",
        }),
      );
      assert.equal(answer.status, 403);
      assert.match(answer.text, /not a member/);
    });
    await t.step("a member forging an owner-only scope is refused", async () => {
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      const boss = await accounts.findAccountByEmail("owner@example.com");
      const [biz] = await accounts.listBusinessesOf(boss!.id);
      await accounts.addMember(biz!.business.id, "clerk@example.com", "member");
      const clerk = await signIn(fx, "clerk@example.com");
      const { params } = await authorizeParams(client, { scope: "app.access billing.manage" });
      const page = await clerk.get(authorizeUrl(fx, params));
      const fields = { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
      const answer = await decide({ ...fields, decision: "allow" }, [
        "app.access",
        "billing.manage",
      ], clerk);
      assert.equal(answer.status, 403);
      assert.match(answer.text, /Only an owner can grant/);
    });
    await t.step("a hostile client name is shown as text; no name is said so", async () => {
      const hostile = await registerClient(fx, { client_name: '<img src=x onerror="alert(1)">' });
      const { params } = await authorizeParams(hostile);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.match(
        page.text,
        /<dd id="client-name">&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;<\/dd>/,
      );
      assert.doesNotMatch(page.text, /<img/);
      const nameless = await registerClient(fx, { client_name: undefined });
      const unnamed = await owner.get(authorizeUrl(fx, (await authorizeParams(nameless)).params));
      assert.match(unnamed.text, /<dd id="client-name">An unnamed application<\/dd>/);
    });

    await t.step("oversized and malformed consent bodies", async () => {
      const huge = await postForm(
        owner,
        consentUrl,
        new URLSearchParams({ txn: "x".repeat(20_000) }),
      );
      assert.equal(huge.status, 413);
      const wrongType = await fetch(consentUrl, {
        method: "POST",
        body: "{}",
        headers: { "Content-Type": "application/json" },
      });
      await wrongType.body?.cancel();
      assert.equal(wrongType.status, 415);
    });
  } finally {
    await fx.close();
  }
});

async function signIn(
  fx: Awaited<ReturnType<typeof oauthFixture>>,
  email: string,
): Promise<Browser> {
  const browser = new Browser();
  const form = await browser.get(`${fx.auth}/sign-in`);
  await browser.post(`${fx.auth}/sign-in`, { csrf: hiddenField(form.text, "csrf"), email });
  await followLink(browser, (await fx.outbox.read()).at(-1)!.link);
  return browser;
}

/** `email` made a member of owner@example.com's business, and signed in. */
async function signedInMember(fx: OAuthFixture, email: string) {
  const accounts = createAccounts(fx.server.store, fx.clock.now);
  const owner = await accounts.findAccountByEmail("owner@example.com");
  const [business] = await accounts.listBusinessesOf(owner!.id);
  const businessId = business!.business.id;
  const { accountId } = await accounts.addMember(businessId, email, "member");
  return { accounts, businessId, accountId, browser: await signIn(fx, email) };
}

/** An error redirect to the client: `error`, its description, the exact `state`, `iss`, no code. */
function assertErrorRedirect(
  fx: OAuthFixture,
  client: TestClient,
  response: Response,
  expected: { error: string; description: string; state: string },
): void {
  const location = new URL(response.headers.get("Location")!);
  assert.equal(location.origin + location.pathname, client.redirectUri);
  const query = new URLSearchParams(location.search);
  assert.equal(query.get("error"), expected.error);
  assert.equal(query.get("error_description"), expected.description);
  assert.equal(query.get("state"), expected.state);
  assert.equal(query.getAll("state").length, 1);
  assert.equal(query.get("iss"), fx.issuer);
  assert.equal(query.get("code"), null);
}

/** The names of an answer's CORS headers (Access-Control-*). */
function corsHeaders(response: Response): string[] {
  return [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));
}
