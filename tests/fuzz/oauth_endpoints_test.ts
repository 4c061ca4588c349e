// Properties of the authorization server's endpoints, in-process through the whole app:
// token, revocation (form bodies), registration (JSON bodies) and the authorization query.
// Each case starts from a request that must succeed and applies a few random mutations, so
// the properties hold for correct requests and for everything near them.
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { decodeJwt } from "jose";
import { issueCode } from "../../src/oauth/codes.ts";
import { MAX_TOKEN_REQUEST_BYTES } from "../../src/oauth/form_body.ts";
import { getGrant } from "../../src/oauth/grants.ts";
import { issueGrant } from "../../testkit/issue_grant.ts";
import { redirectUriMatches, redirectUriProblem } from "../../src/oauth/redirect_uri.ts";
import { MAX_REGISTRATION_BYTES } from "../../src/oauth/registration.ts";
import { createTestApp, type TestApp } from "../blackbox/support/harness.ts";
import { b64url } from "../blackbox/support/oauth_helpers.ts";
import {
  assertStatusIn,
  framedBody,
  framing,
  fuzzRuns,
  headerText,
  hostileText,
  readBounded,
  sendTo,
  sizesAround,
} from "./fuzz_support.ts";

const MAX_ANSWER_BYTES = 64 * 1024;
const VERIFIER = "fuzz-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
const CHALLENGE = b64url(
  new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(VERIFIER))),
);

// deno-lint-ignore no-explicit-any
type Json = any;

interface Client {
  readonly id: string;
  readonly secret: string | null;
  readonly method: "none" | "client_secret_basic" | "client_secret_post";
  readonly redirectUris: readonly string[];
}

interface Fixture {
  readonly app: TestApp;
  readonly send: ReturnType<typeof sendTo>;
  readonly auth: string;
  readonly issuer: string;
  readonly clients: readonly Client[];
  readonly accountId: string;
  readonly businessId: string;
  /** A signed-in browser's Cookie header. */
  readonly cookie: string;
}

const REDIRECT_URIS = [
  "https://client.example.com/cb?tenant=1",
  "http://127.0.0.1/cb",
  "com.example.app:/cb",
];

async function _fixture(): Promise<Fixture> {
  const app = await createTestApp({ VESTIBULE_RATE_LIMITS: "off" });
  const send = sendTo(app);
  const auth = app.config.authUrl;
  const clients: Client[] = [];
  for (const method of ["none", "client_secret_basic", "client_secret_post"] as const) {
    const response = await send(`${auth}/api/auth/oauth2/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        client_name: `Fuzz ${method}`,
        redirect_uris: REDIRECT_URIS,
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: method,
      }),
    });
    assert.equal(response.status, 201);
    const body = await response.json();
    clients.push({
      id: body.client_id,
      secret: body.client_secret ?? null,
      method,
      redirectUris: REDIRECT_URIS,
    });
  }
  const { account, business } = await app.accounts.createAccountWithBusiness(
    "owner@example.com",
    "Acme",
  );
  const cookie = (await app.sessions.start(account.id)).split(";")[0]!;
  app.logs.length = 0;
  return {
    app,
    send,
    auth,
    issuer: `${auth}/api/auth`,
    clients,
    accountId: account.id,
    businessId: business.id,
    cookie,
  };
}

// ---- requests as editable lists of fields, and the mutations applied to them ----

type Fields = [string, string][];

type Mutation =
  | { readonly op: "delete"; readonly at: number }
  | { readonly op: "set"; readonly at: number; readonly value: string }
  | { readonly op: "add"; readonly name: string; readonly value: string }
  | { readonly op: "header"; readonly name: string; readonly value: string | null }
  | { readonly op: "raw"; readonly body: string };

interface Shaped {
  fields: Fields;
  headers: Record<string, string>;
  raw: string | null;
}

function _apply(base: Shaped, mutations: readonly Mutation[]): Shaped {
  const out: Shaped = { fields: [...base.fields], headers: { ...base.headers }, raw: base.raw };
  for (const m of mutations) {
    if (m.op === "delete" && out.fields.length > 0) out.fields.splice(m.at % out.fields.length, 1);
    if (m.op === "set" && out.fields.length > 0) {
      const at = m.at % out.fields.length;
      out.fields[at] = [out.fields[at]![0], m.value];
    }
    if (m.op === "add") out.fields.push([m.name, m.value]);
    if (m.op === "header") {
      if (m.value === null) delete out.headers[m.name];
      else out.headers[m.name] = m.value;
    }
    if (m.op === "raw") out.raw = m.body;
  }
  return out;
}

function _mutations(
  names: readonly string[],
  values: fc.Arbitrary<string>,
  headers: fc.Arbitrary<{ name: string; value: string | null }>,
): fc.Arbitrary<readonly Mutation[]> {
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ op: fc.constant("delete" as const), at: fc.nat() }) },
    {
      weight: 4,
      arbitrary: fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: values }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant("add" as const),
        name: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, hostileText),
        value: values,
      }),
    },
    {
      weight: 2,
      arbitrary: headers.map(({ name, value }) => ({ op: "header" as const, name, value })),
    },
    fc.record({
      op: fc.constant("raw" as const),
      body: fc.oneof(
        hostileText,
        fc.constantFrom("%zz=1", "a=%ff%fe", "=&=&", "grant_type=authorization_code&&&"),
      ),
    }),
  );
  // A quarter of the cases is the untouched request, which must succeed.
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
  );
}

function _formRequest(shaped: Shaped): RequestInit {
  return {
    method: "POST",
    headers: shaped.headers,
    body: shaped.raw ?? new URLSearchParams(shaped.fields).toString(),
  };
}

function _basic(id: string, secret: string): string {
  const form = (s: string) => encodeURIComponent(s).replaceAll("%20", "+");
  return `Basic ${btoa(`${form(id)}:${form(secret)}`)}`;
}

/** The fields and header that authenticate `client` as it registered. */
function _clientAuth(client: Client): { fields: Fields; headers: Record<string, string> } {
  if (client.method === "client_secret_basic") {
    return { fields: [], headers: { Authorization: _basic(client.id, client.secret!) } };
  }
  const fields: Fields = [["client_id", client.id]];
  if (client.method === "client_secret_post") fields.push(["client_secret", client.secret!]);
  return { fields, headers: {} };
}

const FORM_TYPE = "application/x-www-form-urlencoded";

/** The header mutations of the form endpoints: content type and client authentication. */
function _formHeaders(fx: Fixture) {
  const [, basic, post] = fx.clients as [Client, Client, Client];
  return fc.oneof(
    fc.record({
      name: fc.constant("Content-Type"),
      value: fc.oneof(
        fc.constantFrom(`${FORM_TYPE}; charset=utf-8`, "application/json", "text/plain", null),
        headerText,
      ),
    }),
    fc.record({
      name: fc.constant("Authorization"),
      value: fc.oneof(
        fc.constantFrom(
          _basic(basic.id, basic.secret!),
          _basic(basic.id, post.secret!),
          _basic(post.id, post.secret!),
          _basic("nope", "nope"),
          "Basic !!!",
          "Basic " + btoa("no-colon"),
          "Bearer abc",
          null,
        ),
        headerText,
      ),
    }),
  );
}

/** Values near the right ones: other clients' ids and secrets, spellings of the resource. */
function _formValues(fx: Fixture, extra: readonly string[]): fc.Arbitrary<string> {
  const api = fx.app.config.apiUrl;
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        ...fx.clients.flatMap((c) => [c.id, ...(c.secret ? [c.secret] : [])]),
        ...REDIRECT_URIS,
        "http://127.0.0.1:8080/cb",
        "http://127.0.0.1:65536/cb",
        VERIFIER,
        VERIFIER + "x",
        api,
        `${api}/`,
        `${api}/api/mcp`,
        api.toUpperCase(),
        "app.access",
        "app.access members.read offline_access",
        "openid profile email",
        "nope",
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "https://127.0.0.1/client.json",
        "",
        ...extra,
      ),
    },
    hostileText,
    fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/),
  );
}

/**
 * Secret values of a form request: none of them may come back in an error or a log. One
 * that is also part of a field name or another field's value (which an error may name)
 * cannot be told apart.
 */
function _secretsOf(shaped: Shaped): string[] {
  const secret = new Set(["code", "code_verifier", "refresh_token", "client_secret", "token"]);
  const named = shaped.fields.flatMap(([name, value]) => secret.has(name) ? [name] : [name, value]);
  return shaped.fields
    .filter(([name, value]) => secret.has(name) && value.length >= 8)
    .map(([, value]) => value)
    .filter((value) => !named.some((other) => other.includes(value)));
}

const TOKEN_ERRORS = new Set([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "invalid_target",
]);

/** An OAuth error answer: JSON, never cached, a known code, a description, no secret echoed. */
function _checkOAuthError(
  response: Response,
  text: string,
  codes: ReadonlySet<string>,
  secrets: readonly string[],
): void {
  assert.equal(response.headers.get("Content-Type"), "application/json");
  assert.equal(response.headers.get("Cache-Control"), "no-store");
  const body = JSON.parse(text);
  assert.ok(codes.has(body.error), text);
  assert.ok(typeof body.error_description === "string" && body.error_description !== "");
  assert.equal(response.status === 401, body.error === "invalid_client", text);
  for (const secret of secrets) assert.ok(!text.includes(secret), "a secret is echoed");
}

function _checkLogs(fx: Fixture, secrets: readonly string[]): void {
  for (const line of fx.app.logs.splice(0)) {
    assert.ok(!line.includes('"level":"error"'), line);
    for (const secret of secrets) assert.ok(!line.includes(secret), "a secret is logged");
  }
}

Deno.test("fuzz token endpoint: correct requests succeed, the rest fail precisely", async () => {
  const fx = await _fixture();
  const api = fx.app.config.apiUrl;
  const cases = fc.record({
    client: fc.constantFrom(...fx.clients),
    grant: fc.constantFrom("authorization_code", "refresh_token"),
    redirectUri: fc.constantFrom(...REDIRECT_URIS),
    mutations: _mutations(
      [
        "grant_type",
        "code",
        "redirect_uri",
        "code_verifier",
        "client_id",
        "client_secret",
        "refresh_token",
        "scope",
        "resource",
      ],
      _formValues(fx, []),
      _formHeaders(fx),
    ),
  });
  try {
    await fc.assert(
      fc.asyncProperty(cases, async ({ client, grant, redirectUri, mutations }) => {
        fx.app.logs.length = 0; // a failed case may leave its lines behind
        const { fields, headers } = _clientAuth(client);
        if (grant === "authorization_code") {
          const code = await issueCode(fx.app.store, {
            clientId: client.id,
            redirectUri,
            codeChallenge: CHALLENGE,
            resource: api,
            scopes: ["app.access", "members.read"],
            accountId: fx.accountId,
            businessId: fx.businessId,
            nonce: null,
            authTime: Date.now(),
          });
          fields.push(
            ["grant_type", grant],
            ["code", code],
            ["redirect_uri", redirectUri],
            ["code_verifier", VERIFIER],
          );
        } else {
          const { tokens } = await _grant(fx, client);
          fields.push(["grant_type", grant], ["refresh_token", tokens.refresh_token!]);
        }
        const base = { fields, headers: { ...headers, "Content-Type": FORM_TYPE }, raw: null };
        const shaped = _apply(base, mutations);
        const response = await fx.send(
          `${fx.auth}/api/auth/oauth2/token`,
          _formRequest(shaped),
        );
        assertStatusIn(response, [200, 400, 401, 413, 415]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        const secrets = _secretsOf(shaped);
        _checkLogs(fx, secrets);
        if (mutations.length === 0) assert.equal(response.status, 200, text);
        if (response.status !== 200) {
          _checkOAuthError(response, text, TOKEN_ERRORS, secrets);
          return;
        }
        assert.equal(response.headers.get("Cache-Control"), "no-store");
        const body = JSON.parse(text);
        assert.equal(body.token_type, "Bearer");
        // RFC 8707: whatever spelling of the resource was sent, aud is the canonical one.
        assert.equal(decodeJwt(body.access_token).aud, api);
        assert.equal(typeof body.scope, "string");
      }),
      fuzzRuns(800),
    );
  } finally {
    fx.app.store.close();
  }
});

/** The client a form request names: Basic credentials first, else client_id. */
function _claimedClient(shaped: Shaped): string | undefined {
  const basic = /^Basic (.*)$/.exec(shaped.headers.Authorization ?? "");
  if (basic) {
    try {
      return decodeURIComponent(atob(basic[1]!).split(":")[0]!.replaceAll("+", " "));
    } catch {
      return undefined;
    }
  }
  return shaped.fields.find(([name]) => name === "client_id")?.[1];
}

async function _grant(fx: Fixture, client: Client) {
  return await issueGrant({ config: fx.app.config, store: fx.app.store, now: Date.now }, {
    accountId: fx.accountId,
    businessId: fx.businessId,
    clientId: client.id,
    scopes: ["app.access"],
    refresh: true,
  });
}

Deno.test("fuzz revocation: only the grant's own client revokes it, and answers are precise", async () => {
  const fx = await _fixture();
  const cases = fc.record({
    client: fc.constantFrom(...fx.clients),
    owner: fc.constantFrom(...fx.clients),
    kind: fc.constantFrom("refresh_token", "access_token"),
    hint: fc.boolean(),
    mutations: _mutations(
      ["token", "token_type_hint", "client_id", "client_secret"],
      _formValues(fx, ["access_token", "id_token"]),
      _formHeaders(fx),
    ),
  });
  const revocationErrors = new Set([
    "invalid_request",
    "invalid_client",
    "unauthorized_client",
    "unsupported_token_type",
  ]);
  try {
    await fc.assert(
      fc.asyncProperty(cases, async ({ client, owner, kind, hint, mutations }) => {
        fx.app.logs.length = 0;
        const { grantId, tokens } = await _grant(fx, owner);
        const { fields, headers } = _clientAuth(client);
        fields.push([
          "token",
          kind === "refresh_token" ? tokens.refresh_token! : tokens.access_token,
        ]);
        if (hint) fields.push(["token_type_hint", kind]);
        const base = { fields, headers: { ...headers, "Content-Type": FORM_TYPE }, raw: null };
        const shaped = _apply(base, mutations);
        const response = await fx.send(
          `${fx.auth}/api/auth/oauth2/revoke`,
          _formRequest(shaped),
        );
        assertStatusIn(response, [200, 400, 401, 413, 415]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        const secrets = _secretsOf(shaped);
        _checkLogs(fx, secrets);
        const revoked = (await getGrant(fx.app.store, grantId)) === null;
        if (mutations.length === 0) {
          // RFC 7009 §2.1: another client's token is refused and nothing is revoked.
          assert.equal(response.status, client === owner ? 200 : 400, text);
          assert.equal(revoked, client === owner);
        }
        if (revoked) assert.equal(_claimedClient(shaped), owner.id, "another client revoked it");
        if (response.status === 200) {
          assert.equal(text, "");
          assert.equal(response.headers.get("Cache-Control"), "no-store");
        } else {
          assert.ok(!revoked, "a refused request revoked the grant");
          _checkOAuthError(response, text, revocationErrors, secrets);
        }
      }),
      fuzzRuns(800),
    );
  } finally {
    fx.app.store.close();
  }
});

Deno.test("fuzz registration: valid metadata registers, anything else is refused precisely", async () => {
  const fx = await _fixture();
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
        _checkLogs(fx, []);
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
  const fx = await _fixture();
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
    mutations: _mutations(
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
        _formValues(fx, [
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
        const shaped = _apply(base, mutations);
        const query = shaped.raw ?? new URLSearchParams(shaped.fields).toString();
        const url = `${fx.auth}/api/auth/oauth2/authorize?${query}`;
        const response = await fx.send(url, { headers: shaped.headers });
        assertStatusIn(response, [200, 302, 400]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        _checkLogs(fx, []);
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
  const fx = await _fixture();
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
            _checkLogs(fx, []);
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
