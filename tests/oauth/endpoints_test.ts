// The token, revocation and registration endpoints in process: `new Request(…)` against the
// handlers their factories make, with the OAuth error boundary, budgets and headers.
import assert from "node:assert/strict";
import { createRateLimiter, type RateLimiter, UNLIMITED } from "../../src/http/rate_limiter.ts";
import {
  createSharedRateLimiter,
  type SharedRateLimiter,
  UNLIMITED_SHARED,
} from "../../src/http/shared_rate_limiter.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import type { Store } from "../../src/store/store.ts";
import { createAccessTokenGrantReader } from "../../src/oauth/access_token.ts";
import { getGrant } from "../../src/oauth/grants.ts";
import { createRegistrationEndpoint } from "../../src/oauth/registration.ts";
import { createRevocationEndpoint } from "../../src/oauth/revocation.ts";
import { createTokenEndpoint } from "../../src/oauth/token_endpoint.ts";
import { oauthCore, REDIRECT, VERIFIER } from "./fixtures.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

const context = { clientAddress: "192.0.2.1" };
const AUTH = "https://auth.example.com/api/auth/oauth2";

function form(path: string, fields: Record<string, string>, headers: HeadersInit = {}) {
  return new Request(`${AUTH}/${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** An OAuth error answer: status, code, description, and never cached (RFC 6749 §5.1). */
async function oauthError(response: Response, status: number, error: string, description: string) {
  assert.equal(response.status, status);
  assert.equal(response.headers.get("Content-Type"), "application/json");
  assert.equal(response.headers.get("Cache-Control"), "no-store");
  assert.equal(response.headers.get("Pragma"), "no-cache");
  assert.deepEqual(await response.json(), { error, error_description: description });
}

/** A store-backed budget of `burst` on a clock that stands still. */
function sharedLimiter(store: Store, burst: number): SharedRateLimiter {
  return createSharedRateLimiter({ name: "test", perMinute: 60, burst, store, now: () => 0 });
}

async function setup(budgets: { client?: SharedRateLimiter; failure?: RateLimiter } = {}) {
  const core = await oauthCore();
  const client = await core.register(["authorization_code", "refresh_token"]);
  const deps = {
    ...core.deps,
    clients: core.clients,
    budgets: { client: budgets.client ?? UNLIMITED_SHARED, failure: budgets.failure ?? UNLIMITED },
  };
  const token = createTokenEndpoint(deps);
  const revoke = createRevocationEndpoint({
    ...deps,
    accessTokenGrant: createAccessTokenGrantReader({
      keys: core.keys,
      issuer: "https://auth.example.com/api/auth",
    }),
  });
  const exchange = async () => {
    const code = await core.code(client);
    const response = await token(
      form("token", {
        grant_type: "authorization_code",
        client_id: client.clientId,
        code,
        redirect_uri: REDIRECT,
        code_verifier: VERIFIER,
      }),
      context,
    );
    assert.equal(response.status, 200);
    return await response.json();
  };
  return { core, client, token, revoke, exchange };
}

Deno.test("token endpoint: the shell around the grants", async (t) => {
  const { core, client, token, exchange } = await setup();
  try {
    await t.step("a code exchange answers 200, never cached", async () => {
      const code = await core.code(client);
      const response = await token(
        form("token", {
          grant_type: "authorization_code",
          client_id: client.clientId,
          code,
          redirect_uri: REDIRECT,
          code_verifier: VERIFIER,
        }),
        context,
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      assert.equal(response.headers.get("Pragma"), "no-cache");
      const body = await response.json();
      assert.equal(body.token_type, "Bearer");
      assert.equal(body.scope, "app.access");
    });

    const cases: {
      name: string;
      request: () => Request;
      answer: [status: number, error: string, description: string];
    }[] = [
      {
        name: "no grant_type",
        request: () => form("token", { client_id: client.clientId }),
        answer: [400, "invalid_request", "grant_type is required"],
      },
      {
        name: "an unknown grant_type",
        request: () => form("token", { client_id: client.clientId, grant_type: "password" }),
        answer: [400, "unsupported_grant_type", 'grant_type "password" is not supported'],
      },
      {
        name: "an unknown client",
        request: () => form("token", { client_id: "nope", grant_type: "authorization_code" }),
        answer: [401, "invalid_client", 'Unknown client_id "nope"'],
      },
      {
        name: "a repeated parameter",
        request: () =>
          new Request(`${AUTH}/token`, {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body: "grant_type=a&grant_type=b",
          }),
        answer: [400, "invalid_request", 'Parameter "grant_type" is repeated'],
      },
      {
        name: "a JSON body",
        request: () =>
          new Request(`${AUTH}/token`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: "{}",
          }),
        answer: [400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded"],
      },
      {
        name: "a body over 16 KiB",
        request: () => form("token", { grant_type: "x".repeat(17 * 1024) }),
        answer: [413, "invalid_request", "Cannot read request body: exceeds 16384 bytes"],
      },
    ];
    for (const c of cases) {
      await t.step(`${c.name}: ${c.answer[0]} ${c.answer[1]}`, async () => {
        await oauthError(await token(c.request(), context), ...c.answer);
      });
    }

    await t.step("a body over the cap also closes the connection", async () => {
      const response = await token(form("token", { grant_type: "x".repeat(17 * 1024) }), context);
      assert.equal(response.headers.get("Connection"), "close");
      await response.body?.cancel();
    });

    await t.step("a client not registered for refresh_token is unauthorized_client", async () => {
      const codeOnly = await core.register();
      await oauthError(
        await token(
          form("token", { client_id: codeOnly.clientId, grant_type: "refresh_token" }),
          context,
        ),
        400,
        "unauthorized_client",
        "This client is not registered for the refresh_token grant",
      );
    });

    await t.step("a refresh answers 200 with a new refresh token", async () => {
      const { refresh_token } = await exchange();
      const response = await token(
        form("token", {
          grant_type: "refresh_token",
          client_id: client.clientId,
          refresh_token,
        }),
        context,
      );
      assert.equal(response.status, 200);
      assert.notEqual((await response.json()).refresh_token, refresh_token);
    });
  } finally {
    core.close();
  }
});

Deno.test("token endpoint: budgets, spent by proof and by failure", async (t) => {
  const buckets = await openKvStore(":memory:");
  const { core, client, token, exchange } = await setup({
    client: sharedLimiter(buckets, 2),
    failure: createRateLimiter({ perMinute: 60, burst: 2, now: () => 0 }),
  });
  try {
    await t.step("requests a client proved are its own spend its budget", async () => {
      await exchange();
      await exchange();
      const code = await core.code(client);
      const response = await token(
        form("token", {
          grant_type: "authorization_code",
          client_id: client.clientId,
          code,
          redirect_uri: REDIRECT,
          code_verifier: VERIFIER,
        }),
        context,
      );
      assert.equal(response.headers.get("Retry-After"), "1");
      await oauthError(
        response,
        429,
        "temporarily_unavailable",
        "Too many requests for this client; retry after 1 s",
      );
    });

    await t.step("failures spend the address's budget, checked before any work", async () => {
      const unknown = () => token(form("token", { client_id: "nope" }), context);
      assert.equal((await unknown()).status, 401);
      assert.equal((await unknown()).status, 401);
      const shut = await unknown();
      assert.equal(shut.headers.get("Retry-After"), "1");
      await oauthError(
        shut,
        429,
        "temporarily_unavailable",
        "Too many failed requests from this address; retry after 1 s",
      );
      const elsewhere = await token(form("token", { client_id: "nope" }), {
        clientAddress: "198.51.100.7",
      });
      assert.equal(elsewhere.status, 401);
    });
  } finally {
    core.close();
    buckets.close();
  }
});

Deno.test("revocation endpoint: RFC 7009 in process", async (t) => {
  const { core, client, revoke, exchange } = await setup();
  try {
    const gidOf = (jwt: string) => JSON.parse(atob(jwt.split(".")[1]!)).gid as string;

    await t.step("an unknown token is 200 and revokes nothing", async () => {
      const response = await revoke(
        form("revoke", { client_id: client.clientId, token: "abc" }),
        context,
      );
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("Cache-Control"), "no-store");
    });

    await t.step("another client's token is refused and stays alive", async () => {
      const { access_token } = await exchange();
      const other = await core.register();
      await oauthError(
        await revoke(form("revoke", { client_id: other.clientId, token: access_token }), context),
        400,
        "unauthorized_client",
        "The token was issued to another client",
      );
      assert.ok(await getGrant(core.store, gidOf(access_token)));
    });

    await t.step("a refresh or access token of the client ends its whole grant", async () => {
      for (const kind of ["refresh_token", "access_token"] as const) {
        const tokens = await exchange();
        const response = await revoke(
          form("revoke", { client_id: client.clientId, token: tokens[kind] }),
          context,
        );
        assert.equal(response.status, 200, kind);
        assert.equal(await getGrant(core.store, gidOf(tokens.access_token)), null, kind);
      }
    });

    await t.step("an expired access token still names its grant", async () => {
      const { access_token } = await exchange();
      core.clock.advance(2 * 60 * 60 * 1000);
      const response = await revoke(
        form("revoke", { client_id: client.clientId, token: access_token }),
        context,
      );
      assert.equal(response.status, 200);
      assert.equal(await getGrant(core.store, gidOf(access_token)), null);
    });

    await t.step("no token, or an unknown hint", async () => {
      await oauthError(
        await revoke(form("revoke", { client_id: client.clientId }), context),
        400,
        "invalid_request",
        "token is required",
      );
      await oauthError(
        await revoke(
          form("revoke", { client_id: client.clientId, token: "t", token_type_hint: "id_token" }),
          context,
        ),
        400,
        "unsupported_token_type",
        'token_type_hint "id_token" is not supported',
      );
    });
  } finally {
    core.close();
  }
});

Deno.test("registration endpoint: RFC 7591 in process", async (t) => {
  const core = await oauthCore();
  const buckets = await openKvStore(":memory:");
  const register = createRegistrationEndpoint({
    clients: core.clients,
    limiter: sharedLimiter(buckets, 3),
    scopes: SPEC_SCOPES,
  });
  const post = (body: string, type = "application/json") =>
    register(
      new Request(`${AUTH}/register`, {
        method: "POST",
        headers: { "Content-Type": type },
        body,
      }),
      context,
    );
  try {
    await t.step("a confidential client gets its secret once, and a 201", async () => {
      const response = await post(JSON.stringify({
        redirect_uris: [REDIRECT],
        client_name: "Agent",
        token_endpoint_auth_method: "client_secret_basic",
        client_id: "mine", // server-owned: ignored
      }));
      assert.equal(response.status, 201);
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      const body = await response.json();
      assert.notEqual(body.client_id, "mine");
      assert.equal(typeof body.client_secret, "string");
      assert.equal(body.client_secret_expires_at, 0);
      assert.deepEqual(body.redirect_uris, [REDIRECT]);
      const found = await core.clients.lookup(body.client_id);
      assert.ok(found.ok && found.client.secretHash !== body.client_secret);
    });

    await t.step("bad metadata is the RFC 7591 error that names the field", async () => {
      await oauthError(
        await post(JSON.stringify({ redirect_uris: ["javascript:alert(1)"] })),
        400,
        "invalid_redirect_uri",
        'redirect URI "javascript:alert(1)" must not use the javascript: scheme',
      );
      await oauthError(
        await post("{", "application/json"),
        400,
        "invalid_client_metadata",
        "The body is not a JSON object",
      );
    });

    await t.step("the budget per address is 429 with Retry-After", async () => {
      const limited = await post(JSON.stringify({ redirect_uris: [REDIRECT] }));
      assert.equal(limited.headers.get("Retry-After"), "1");
      await oauthError(
        limited,
        429,
        "temporarily_unavailable",
        "Too many registrations from this address; retry after 1 s",
      );
    });
  } finally {
    core.close();
    buckets.close();
  }
});
