// Properties of the authorization server's registration (JSON bodies) and authorization
// (query) endpoints, in-process through the whole app, from a request that must succeed with
// a few random mutations; and the body cap of token, revocation and registration.
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { MAX_TOKEN_REQUEST_BYTES } from "../../src/oauth/form_body.ts";
import { redirectUriMatches, redirectUriProblem } from "../../src/oauth/redirect_uri.ts";
import { MAX_REGISTRATION_BYTES } from "../../src/oauth/registration.ts";
import {
  assertStatusIn,
  framedBody,
  framing,
  fuzzRuns,
  headerText,
  hostileText,
  readBounded,
  sizesAround,
} from "./fuzz_support.ts";
import {
  apply,
  CHALLENGE,
  checkLogs,
  fixture,
  FORM_TYPE,
  formValues,
  MAX_ANSWER_BYTES,
  mutations,
  REDIRECT_URIS,
  type Shaped,
} from "./oauth_fuzz_support.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("fuzz registration: valid metadata registers, anything else is refused precisely", async () => {
  const fx = await fixture();
  const redirectUri = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...REDIRECT_URIS) },
    fc.constantFrom(
      "javascript:alert(1)",
      "http://evil.example/cb",
      "https://a.example/cb#f",
      "https://*.example/cb",
      "http://127.0.0.1:65536/cb",
      "https://user@a.example/cb",
      "data:text/html,x",
    ),
    hostileText,
  );
  const valueOf: Record<string, fc.Arbitrary<unknown>> = {
    client_name: fc.oneof(hostileText, fc.string({ maxLength: 120 })),
    redirect_uris: fc.array(redirectUri, { maxLength: 11 }),
    grant_types: fc.array(fc.constantFrom("authorization_code", "refresh_token", "implicit")),
    response_types: fc.array(fc.constantFrom("code", "token")),
    token_endpoint_auth_method: fc.constantFrom(
      "none",
      "client_secret_basic",
      "client_secret_post",
      "private_key_jwt",
    ),
    scope: fc.constantFrom("app.access", "app.access members.read", "nope", ""),
    client_id: fc.constant("chosen-by-client"),
    client_secret: fc.constant("chosen-by-client-secret"),
  };
  const names = Object.keys(valueOf);
  const mutation = fc.oneof(
    fc.record({ op: fc.constant("delete"), name: fc.constantFrom(...names) }),
    fc.constantFrom(...names).chain((name) =>
      fc.record({
        op: fc.constant("set"),
        name: fc.constant(name),
        value: fc.oneof({ weight: 3, arbitrary: valueOf[name]! }, fc.jsonValue({ maxDepth: 2 })),
      })
    ),
    fc.record({ op: fc.constant("set"), name: hostileText, value: fc.jsonValue({ maxDepth: 2 }) }),
    fc.record({ op: fc.constant("replace"), value: fc.jsonValue({ maxDepth: 2 }) }),
    fc.record({
      op: fc.constant("raw"),
      value: fc.oneof(hostileText, fc.constantFrom("{", '{"redirect_uris":', "\ufeff{}")),
    }),
    fc.record({
      op: fc.constant("type"),
      value: fc.oneof(fc.constantFrom("application/json; charset=utf-8", "text/plain"), headerText),
    }),
  );
  const cases = fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
  );
  try {
    await fc.assert(
      fc.asyncProperty(cases, async (mutations) => {
        fx.app.logs.length = 0;
        let metadata: Json = {
          client_name: "Fuzz agent",
          redirect_uris: [REDIRECT_URIS[0]],
          grant_types: ["authorization_code", "refresh_token"],
        };
        let raw: string | null = null;
        let type = "application/json";
        for (const m of mutations as Json[]) {
          if (m.op === "delete" && _isObject(metadata)) delete metadata[m.name];
          if (m.op === "set" && _isObject(metadata)) metadata[m.name] = m.value;
          if (m.op === "replace") metadata = m.value;
          if (m.op === "raw") raw = m.value;
          if (m.op === "type") type = m.value;
        }
        const response = await fx.send(`${fx.auth}/api/auth/oauth2/register`, {
          method: "POST",
          headers: { "Content-Type": type },
          body: raw ?? JSON.stringify(metadata),
        });
        assertStatusIn(response, [201, 400, 413, 415]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        checkLogs(fx, []);
        if (mutations.length === 0) assert.equal(response.status, 201, text);
        const body = JSON.parse(text);
        if (response.status !== 201) {
          assert.ok(["invalid_client_metadata", "invalid_redirect_uri"].includes(body.error), text);
          assert.ok(typeof body.error_description === "string" && body.error_description !== "");
          return;
        }
        assert.notEqual(body.client_id, "chosen-by-client", "the server names the client");
        assert.notEqual(body.client_secret, "chosen-by-client-secret");
        assert.ok(body.redirect_uris.length > 0);
        for (const uri of body.redirect_uris) assert.equal(redirectUriProblem(uri), null, uri);
        assert.equal(body.client_secret === undefined, body.token_endpoint_auth_method === "none");
      }),
      fuzzRuns(800),
    );
  } finally {
    fx.app.store.close();
  }
});

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const AUTHORIZATION_ERRORS = new Set([
  "invalid_request",
  "unsupported_response_type",
  "invalid_scope",
  "invalid_target",
  "access_denied",
  "login_required",
  "consent_required",
]);

Deno.test("fuzz authorize: errors go only to a registered redirect URI, with state and iss", async () => {
  const fx = await fixture();
  const client = fx.clients[0]!;
  const cases = fc.record({
    signedIn: fc.boolean(),
    // What the client presents, and whether it is registered (a loopback port may vary).
    redirect: fc.constantFrom(
      ...REDIRECT_URIS.map((uri) => ({ uri, registered: true })),
      { uri: "http://127.0.0.1:51234/cb", registered: true },
      { uri: "http://127.0.0.1:65536/cb", registered: false },
      { uri: "https://client.example.com/cb?tenant=2", registered: false },
    ),
    state: fc.oneof(fc.constant("st-1"), hostileText),
    // prompt=none ends in an error redirect, where the state must come back unchanged.
    promptNone: fc.boolean(),
    mutations: mutations(
      [
        "response_type",
        "client_id",
        "redirect_uri",
        "code_challenge",
        "code_challenge_method",
        "state",
        "resource",
        "scope",
        "prompt",
        "nonce",
      ],
      fc.oneof(
        formValues(fx, [
          "code",
          "token",
          "S256",
          "plain",
          CHALLENGE,
          "none",
          "consent",
          "none consent",
        ]),
        fc.string({ minLength: 2040, maxLength: 2060 }),
      ),
      fc.record({ name: fc.constant("Cookie"), value: fc.constantFrom(null, "session=forged") }),
    ),
  });
  try {
    await fc.assert(
      fc.asyncProperty(cases, async ({ signedIn, redirect, state, promptNone, mutations }) => {
        fx.app.logs.length = 0;
        const base: Shaped = {
          fields: [
            ["response_type", "code"],
            ["client_id", client.id],
            ["redirect_uri", redirect.uri],
            ["code_challenge", CHALLENGE],
            ["code_challenge_method", "S256"],
            ["state", state],
            ["scope", "app.access"],
            ...(promptNone ? [["prompt", "none"] as [string, string]] : []),
          ],
          headers: signedIn ? { Cookie: fx.cookie } : {},
          raw: null,
        };
        const shaped = apply(base, mutations);
        const query = shaped.raw ?? new URLSearchParams(shaped.fields).toString();
        const url = `${fx.auth}/api/auth/oauth2/authorize?${query}`;
        const response = await fx.send(url, { headers: shaped.headers });
        assertStatusIn(response, [200, 302, 400]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        checkLogs(fx, []);
        const sent = new URL(url).searchParams;
        const location = response.headers.get("Location");
        const cookie = shaped.headers.Cookie === fx.cookie;
        if (mutations.length === 0 && !redirect.registered) assert.equal(response.status, 400);
        if (mutations.length === 0 && redirect.registered) {
          assert.equal(response.status, signedIn && !promptNone ? 200 : 302);
          if (promptNone) {
            const error = new URL(location!).searchParams.get("error");
            assert.equal(error, signedIn ? "consent_required" : "login_required");
          }
        }
        if (response.status !== 302) {
          assert.equal(location, null);
          assert.match(response.headers.get("Content-Type") ?? "", /^text\/html/);
          assert.ok(!/<script/i.test(text), "markup from the request is not escaped");
          return;
        }
        assert.ok(location !== null);
        if (location.startsWith(`${fx.auth}/sign-in?`)) {
          assert.ok(!cookie, "a signed-in human is not sent to sign in");
          return;
        }
        // An error (or a code) goes back only to a URI registered for the client.
        const target = new URL(location);
        const presented = sent.get("redirect_uri")!;
        assert.ok(client.redirectUris.some((r) => redirectUriMatches(r, presented)), presented);
        assert.equal(_withoutQuery(location), _withoutQuery(presented));
        assert.equal(target.searchParams.get("iss"), fx.issuer);
        const states = sent.getAll("state");
        if (states.length === 1) assert.equal(target.searchParams.get("state"), states[0]);
        else assert.equal(target.searchParams.get("state"), null);
        assert.ok(AUTHORIZATION_ERRORS.has(target.searchParams.get("error")!), location);
      }),
      fuzzRuns(800),
    );
  } finally {
    fx.app.store.close();
  }
});

function _withoutQuery(uri: string): string {
  const url = new URL(uri);
  return `${url.origin === "null" ? url.protocol : url.origin}${url.pathname}`;
}

Deno.test("fuzz OAuth bodies: over the cap is 413 with an OAuth error, however it is sent", async (t) => {
  const fx = await fixture();
  const endpoints = [
    { path: "token", type: FORM_TYPE, cap: MAX_TOKEN_REQUEST_BYTES, error: "invalid_request" },
    { path: "revoke", type: FORM_TYPE, cap: MAX_TOKEN_REQUEST_BYTES, error: "invalid_request" },
    {
      path: "register",
      type: "application/json",
      cap: MAX_REGISTRATION_BYTES,
      error: "invalid_client_metadata",
    },
  ];
  try {
    for (const { path, type, cap, error } of endpoints) {
      await t.step(path, async () => {
        await fc.assert(
          fc.asyncProperty(sizesAround(cap, 32), framing, async (n, frame) => {
            fx.app.logs.length = 0;
            // A body of the right type padded to n bytes: a field, or JSON white space.
            const text = type === FORM_TYPE
              ? `client_id=nope&pad=${"x".repeat(n - 19)}`
              : `{"redirect_uris":[]}${" ".repeat(n - 20)}`;
            const response = await fx.send(
              `${fx.auth}/api/auth/oauth2/${path}`,
              framedBody(text, frame, { "Content-Type": type }),
            );
            const answer = JSON.parse(await readBounded(response, MAX_ANSWER_BYTES));
            checkLogs(fx, []);
            if (n > cap) {
              assert.equal(response.status, 413);
              assert.deepEqual(answer, {
                error,
                error_description: `Cannot read request body: exceeds ${cap} bytes`,
              });
            } else {
              // Read whole and refused for what it says: an unknown client, no redirect URI.
              assert.equal(response.status, path === "register" ? 400 : 401);
            }
          }),
          fuzzRuns(150),
        );
      });
    }
  } finally {
    fx.app.store.close();
  }
});
