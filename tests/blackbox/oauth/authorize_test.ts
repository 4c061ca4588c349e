// The authorization endpoint's rules: the errors it shows, those it sends back to the client,
// and that neither it nor its consent form answers CORS.
import assert from "node:assert/strict";
import { Browser, hiddenField } from "../support/accounts_browser.ts";
import {
  assertErrorRedirect,
  authorizeParams,
  authorizeUrl,
  AWKWARD_STATE,
  oauthFixture,
  ownerBrowser,
  pkce,
  postForm,
  registerClient,
  signedInMember,
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

/** The names of an answer's CORS headers (Access-Control-*). */
function corsHeaders(response: Response): string[] {
  return [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));
}
