// Properties of the authorization server's token and revocation endpoints (form bodies),
// in-process through the whole app. Each case starts from a request that must succeed and
// applies a few random mutations, so the properties hold for correct requests and for
// everything near them. Registration, authorization and body caps are in
// oauth_registration_authorize_test.ts.
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { decodeJwt } from "jose";
import { issueCode } from "../../src/oauth/codes.ts";
import { getGrant } from "../../src/oauth/grants.ts";
import { issueGrant } from "../../testkit/issue_grant.ts";
import { assertStatusIn, fuzzRuns, headerText, readBounded } from "./fuzz_support.ts";
import {
  apply,
  CHALLENGE,
  checkLogs,
  type Client,
  type Fields,
  type Fixture,
  fixture,
  FORM_TYPE,
  formValues,
  MAX_ANSWER_BYTES,
  mutations,
  REDIRECT_URIS,
  type Shaped,
  VERIFIER,
} from "./oauth_fuzz_support.ts";

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

Deno.test("fuzz token endpoint: correct requests succeed, the rest fail precisely", async () => {
  const fx = await fixture();
  const api = fx.app.config.apiUrl;
  const cases = fc.record({
    client: fc.constantFrom(...fx.clients),
    grant: fc.constantFrom("authorization_code", "refresh_token"),
    redirectUri: fc.constantFrom(...REDIRECT_URIS),
    mutations: mutations(
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
      formValues(fx, []),
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
        const shaped = apply(base, mutations);
        const response = await fx.send(
          `${fx.auth}/api/auth/oauth2/token`,
          _formRequest(shaped),
        );
        assertStatusIn(response, [200, 400, 401, 413, 415]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        const secrets = _secretsOf(shaped);
        checkLogs(fx, secrets);
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
  const fx = await fixture();
  const cases = fc.record({
    client: fc.constantFrom(...fx.clients),
    owner: fc.constantFrom(...fx.clients),
    kind: fc.constantFrom("refresh_token", "access_token"),
    hint: fc.boolean(),
    mutations: mutations(
      ["token", "token_type_hint", "client_id", "client_secret"],
      formValues(fx, ["access_token", "id_token"]),
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
        const shaped = apply(base, mutations);
        const response = await fx.send(
          `${fx.auth}/api/auth/oauth2/revoke`,
          _formRequest(shaped),
        );
        assertStatusIn(response, [200, 400, 401, 413, 415]);
        const text = await readBounded(response, MAX_ANSWER_BYTES);
        const secrets = _secretsOf(shaped);
        checkLogs(fx, secrets);
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
