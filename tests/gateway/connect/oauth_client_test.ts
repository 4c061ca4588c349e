// Vestibule as an OAuth client of an upstream's authorization server, against a small one on
// loopback: registration, the authorization URL and its response, tokens, revocation.
import assert from "node:assert/strict";
import {
  authorizationUrl,
  checkAuthorizationResponse,
  type ClientCredentials,
  exchangeCode,
  refreshTokens,
  registerClient,
  revokeToken,
} from "../../../src/gateway/connect/oauth_client.ts";
import {
  fakeAuthorizationServer,
  json,
  recordingFetch,
  recordTimeouts,
  type Route,
  serveFake,
} from "./fakes.ts";

const NOW = 1_800_000_000_000;
const deps = { now: () => NOW };
const PUBLIC: ClientCredentials = { clientId: "vestibule", clientSecret: null, authMethod: "none" };
const RESOURCE = "https://mcp.example/mcp";
const SECRET_CODE = "code-8f3a-never-shown";
const SECRET_REFRESH = "refresh-71c2-never-shown";

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

Deno.test("registration asks for what Vestibule needs and keeps what the server gave", async (t) => {
  await t.step("a confidential client with Basic when the server takes it and none", async () => {
    const as = serveFake({
      "/register": json(() => ({ client_id: "c-0", client_secret: "s-0" }), 201),
    });
    try {
      const result = await registerClient(
        fakeAuthorizationServer(as.origin),
        { redirectUri: "https://auth.example/connections/callback", clientName: "Vestibule" },
        deps,
      );
      assert.deepEqual(result, {
        ok: true,
        client: { clientId: "c-0", clientSecret: "s-0", authMethod: "client_secret_basic" },
      });
      assert.equal(JSON.parse(as.seen[0]!.body).token_endpoint_auth_method, "client_secret_basic");
    } finally {
      await as.close();
    }
  });

  await t.step("a public client when the server takes only that", async () => {
    const as = serveFake({
      "/register": json(() => ({ client_id: "c-1", token_endpoint_auth_method: "none" }), 201),
    });
    try {
      const result = await registerClient(
        fakeAuthorizationServer(as.origin, { tokenEndpointAuthMethods: ["none"] }),
        {
          redirectUri: "https://auth.example/connections/callback",
          clientName: "Vestibule",
          clientUri: "https://example.com",
          scope: "files:read",
        },
        deps,
      );
      assert.deepEqual(result, {
        ok: true,
        client: { clientId: "c-1", clientSecret: null, authMethod: "none" },
      });
      assert.equal(as.seen[0]!.headers.get("Content-Type"), "application/json");
      assert.deepEqual(JSON.parse(as.seen[0]!.body), {
        redirect_uris: ["https://auth.example/connections/callback"],
        client_name: "Vestibule",
        client_uri: "https://example.com",
        scope: "files:read",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        application_type: "web",
      });
    } finally {
      await as.close();
    }
  });

  await t.step("a confidential client when the server takes only secrets", async () => {
    const as = serveFake({
      "/register": json(() => ({ client_id: "c-2", client_secret: "s-2" }), 201),
    });
    try {
      const result = await registerClient(
        fakeAuthorizationServer(as.origin, {
          tokenEndpointAuthMethods: ["private_key_jwt", "client_secret_post"],
        }),
        { redirectUri: "http://127.0.0.1:8001/connections/callback", clientName: "Vestibule" },
        deps,
      );
      assert.deepEqual(result, {
        ok: true,
        client: { clientId: "c-2", clientSecret: "s-2", authMethod: "client_secret_post" },
      });
      const sent = JSON.parse(as.seen[0]!.body);
      assert.equal(sent.token_endpoint_auth_method, "client_secret_post");
      assert.equal(sent.application_type, "native");
    } finally {
      await as.close();
    }
  });

  const refusals: [string, Parameters<typeof fakeAuthorizationServer>[1], RegExp][] = [
    ["no registration endpoint", { registrationEndpoint: null }, /offers no client registration$/],
    [
      "no client authentication Vestibule speaks",
      { tokenEndpointAuthMethods: ["private_key_jwt"] },
      /offers no client authentication Vestibule supports/,
    ],
  ];
  for (const [name, extra, message] of refusals) {
    await t.step(`${name}: nothing is sent`, async () => {
      const recording = recordingFetch();
      const result = await registerClient(
        fakeAuthorizationServer("https://as.example", extra),
        { redirectUri: "https://auth.example/cb", clientName: "Vestibule" },
        { ...deps, fetch: recording.fetch },
      );
      assert.match(result.ok ? "" : result.problem, message);
      assert.deepEqual(recording.urls, []);
    });
  }

  await t.step("a refusal names the server's error code", async () => {
    const as = serveFake({
      "/register": json(() => ({
        error: "invalid_redirect_uri",
        error_description: "whatever the server says",
      }), 400),
    });
    try {
      const result = await registerClient(
        fakeAuthorizationServer(as.origin),
        { redirectUri: "https://auth.example/cb", clientName: "Vestibule" },
        deps,
      );
      assert.deepEqual(result, {
        ok: false,
        problem: `The registration endpoint at ${new URL(as.origin).host} refused the ` +
          "registration with invalid_redirect_uri (status 400)",
      });
    } finally {
      await as.close();
    }
  });

  await t.step("a secret method without a secret is refused", async () => {
    const as = serveFake({
      "/register": json(
        () => ({ client_id: "c-3", token_endpoint_auth_method: "client_secret_basic" }),
        201,
      ),
    });
    try {
      const result = await registerClient(
        fakeAuthorizationServer(as.origin),
        { redirectUri: "https://auth.example/cb", clientName: "Vestibule" },
        deps,
      );
      assert.match(
        result.ok ? "" : result.problem,
        /registered client_secret_basic but gave no client secret$/,
      );
    } finally {
      await as.close();
    }
  });
});

Deno.test("the authorization URL carries PKCE S256, state, scopes and the resource", () => {
  const url = new URL(authorizationUrl(
    fakeAuthorizationServer("https://as.example", {
      authorizationEndpoint: "https://as.example/authorize?tenant=t1",
    }),
    PUBLIC,
    {
      redirectUri: "https://auth.example/connections/callback",
      state: "st",
      codeChallenge: "ch",
      resource: RESOURCE,
      scopes: ["files:read", "files:write"],
    },
  ));
  assert.equal(url.origin + url.pathname, "https://as.example/authorize");
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    tenant: "t1",
    response_type: "code",
    client_id: "vestibule",
    redirect_uri: "https://auth.example/connections/callback",
    scope: "files:read files:write",
    state: "st",
    code_challenge: "ch",
    code_challenge_method: "S256",
    resource: RESOURCE,
  });
});

Deno.test("the authorization response is checked before its code is used", async (t) => {
  const issuer = "https://as.example/tenant";
  const cases: [
    string,
    boolean,
    string,
    { ok: true; code: string } | { ok: false; problem: string },
  ][] = [
    ["a good response with iss", true, `code=c&state=s&iss=${issuer}`, { ok: true, code: "c" }],
    ["a good response without iss from a server that never sends it", false, "code=c&state=s", {
      ok: true,
      code: "c",
    }],
    [
      "iss of another server",
      false,
      `code=${SECRET_CODE}&state=s&iss=https://evil.example`,
      { ok: false, problem: `The sign-in response did not come from ${issuer}` },
    ],
    [
      "iss differing only by a trailing slash (no normalisation)",
      true,
      `code=c&state=s&iss=${issuer}/`,
      { ok: false, problem: `The sign-in response did not come from ${issuer}` },
    ],
    [
      "an error from another server, not shown",
      false,
      "error=access_denied&error_description=click+here&state=s&iss=https://evil.example",
      { ok: false, problem: `The sign-in response did not come from ${issuer}` },
    ],
    [
      "no iss from a server that promised it",
      true,
      `code=${SECRET_CODE}&state=s`,
      { ok: false, problem: `The sign-in response lacks the "iss" that ${issuer} promises` },
    ],
    [
      "another state",
      false,
      `code=${SECRET_CODE}&state=other`,
      {
        ok: false,
        problem: "The sign-in response does not belong to this sign-in (its state differs)",
      },
    ],
    ["no state", false, "code=c", {
      ok: false,
      problem: "The sign-in response does not belong to this sign-in (its state differs)",
    }],
    ["a repeated code", false, "code=a&code=b&state=s", {
      ok: false,
      problem: 'The sign-in response repeats "code"',
    }],
    ["a declined sign-in", true, `error=access_denied&state=s&iss=${issuer}`, {
      ok: false,
      problem: "The sign-in at as.example was declined",
    }],
    ["another error, in plain words", false, "error=server_error&state=s", {
      ok: false,
      problem: "as.example could not complete the sign-in just now; try again later",
    }],
    ["no code", false, "state=s", {
      ok: false,
      problem: "The sign-in response of as.example has no code",
    }],
  ];
  for (const [name, issParameterSupported, query, expected] of cases) {
    await t.step(name, () => {
      const server = fakeAuthorizationServer("https://as.example", {
        issuer,
        issParameterSupported,
      });
      assert.deepEqual(
        checkAuthorizationResponse(server, new URLSearchParams(query), "s"),
        expected,
      );
    });
  }
});

/** A token endpoint answering `answer` to every request. */
function tokenServer(answer: Route) {
  return serveFake({ "/token": answer, "/revoke": () => new Response(null, { status: 200 }) });
}

const tokens = (extra: Record<string, unknown> = {}) => () =>
  Response.json({ access_token: "at-1", token_type: "bearer", expires_in: 3600, ...extra }, {
    headers: { "Cache-Control": "no-store" },
  });

Deno.test("code exchange and refresh", async (t) => {
  await t.step("a code is exchanged with its verifier, redirect URI and resource", async () => {
    const as = tokenServer(tokens({ refresh_token: "rt-1", scope: "files:read" }));
    try {
      const result = await exchangeCode(fakeAuthorizationServer(as.origin), PUBLIC, {
        code: SECRET_CODE,
        codeVerifier: "verifier",
        redirectUri: "https://auth.example/cb",
        resource: RESOURCE,
      }, deps);
      assert.deepEqual(result, {
        ok: true,
        tokens: {
          accessToken: "at-1",
          refreshToken: "rt-1",
          expiresAt: NOW + 3_600_000,
          scope: "files:read",
        },
      });
      assert.equal(as.seen[0]!.headers.get("Content-Type"), "application/x-www-form-urlencoded");
      assert.equal(as.seen[0]!.headers.get("Authorization"), null);
      assert.deepEqual(form(as.seen[0]!.body), {
        grant_type: "authorization_code",
        code: SECRET_CODE,
        redirect_uri: "https://auth.example/cb",
        code_verifier: "verifier",
        resource: RESOURCE,
        client_id: "vestibule",
      });
    } finally {
      await as.close();
    }
  });

  await t.step("a confidential client authenticates with Basic, form-encoded first", async () => {
    const as = tokenServer(tokens({ expires_in: undefined }));
    try {
      const client: ClientCredentials = {
        clientId: "id:1",
        clientSecret: "s e/cret",
        authMethod: "client_secret_basic",
      };
      const result = await refreshTokens(fakeAuthorizationServer(as.origin), client, {
        refreshToken: SECRET_REFRESH,
        resource: RESOURCE,
      }, deps);
      assert.equal(result.ok && result.tokens.expiresAt, null);
      assert.equal(as.seen[0]!.headers.get("Authorization"), `Basic ${btoa("id%3A1:s+e%2Fcret")}`);
      assert.deepEqual(form(as.seen[0]!.body), {
        grant_type: "refresh_token",
        refresh_token: SECRET_REFRESH,
        resource: RESOURCE,
      });
    } finally {
      await as.close();
    }
  });

  await t.step("client_secret_post puts the secret in the form", async () => {
    const as = tokenServer(tokens());
    try {
      await refreshTokens(
        fakeAuthorizationServer(as.origin),
        {
          clientId: "c",
          clientSecret: "s",
          authMethod: "client_secret_post",
        },
        { refreshToken: "r", resource: RESOURCE },
        deps,
      );
      assert.equal(form(as.seen[0]!.body).client_secret, "s");
      assert.equal(as.seen[0]!.headers.get("Authorization"), null);
    } finally {
      await as.close();
    }
  });

  await t.step("a refresh without a new refresh token keeps the old one", async () => {
    const as = tokenServer(tokens());
    try {
      const result = await refreshTokens(fakeAuthorizationServer(as.origin), PUBLIC, {
        refreshToken: SECRET_REFRESH,
        resource: RESOURCE,
      }, deps);
      assert.equal(result.ok && result.tokens.refreshToken, SECRET_REFRESH);
    } finally {
      await as.close();
    }
  });

  await t.step("a rotated refresh token replaces the old one", async () => {
    const as = tokenServer(tokens({ refresh_token: "rt-2" }));
    try {
      const result = await refreshTokens(fakeAuthorizationServer(as.origin), PUBLIC, {
        refreshToken: SECRET_REFRESH,
        resource: RESOURCE,
      }, deps);
      assert.equal(result.ok && result.tokens.refreshToken, "rt-2");
    } finally {
      await as.close();
    }
  });

  const outcomes: [string, Route, boolean, RegExp][] = [
    [
      "invalid_grant: the person must connect again",
      json(() => ({ error: "invalid_grant", error_description: `bad ${SECRET_REFRESH}` }), 400),
      true,
      /refused: the grant is no longer valid \(invalid_grant\)$/,
    ],
    [
      "invalid_client on 401",
      json(() => ({ error: "invalid_client" }), 401),
      true,
      /\(invalid_client\)$/,
    ],
    [
      "unauthorized_client",
      json(() => ({ error: "unauthorized_client" }), 400),
      true,
      /\(unauthorized_client\)$/,
    ],
    [
      "another OAuth error, by its code only",
      json(() => ({ error: "invalid_request" }), 400),
      false,
      /refused: it answered invalid_request$/,
    ],
    ["503: another try later", () => new Response("busy", { status: 503 }), false, /answered 503/],
    [
      "a 503 in JSON",
      json(() => ({ error: "temporarily_unavailable" }), 503),
      false,
      /refused with temporarily_unavailable \(status 503\)$/,
    ],
    [
      "a token type other than Bearer",
      tokens({ token_type: "DPoP" }),
      false,
      /issued a DPoP token, not a Bearer token$/,
    ],
    [
      "no access token",
      json(() => ({ token_type: "Bearer" })),
      false,
      /answered no token response \("access_token" is missing or malformed\)$/,
    ],
  ];
  for (const [name, answer, permanent, message] of outcomes) {
    await t.step(name, async () => {
      const as = tokenServer(answer);
      try {
        const result = await refreshTokens(fakeAuthorizationServer(as.origin), PUBLIC, {
          refreshToken: SECRET_REFRESH,
          resource: RESOURCE,
        }, deps);
        assert.equal(result.ok, false);
        if (result.ok) return;
        assert.equal(result.permanent, permanent);
        assert.match(result.problem, message);
        assert.ok(!result.problem.includes(SECRET_REFRESH));
      } finally {
        await as.close();
      }
    });
  }

  await t.step("an unreachable token endpoint is transient", async () => {
    const as = tokenServer(tokens());
    await as.close();
    const result = await exchangeCode(fakeAuthorizationServer(as.origin), PUBLIC, {
      code: SECRET_CODE,
      codeVerifier: "v",
      redirectUri: "https://auth.example/cb",
      resource: RESOURCE,
    }, deps);
    assert.deepEqual(result, {
      ok: false,
      permanent: false,
      problem: `The token endpoint at ${new URL(as.origin).host} is unreachable`,
    });
  });
});

Deno.test("revocation", async (t) => {
  await t.step("sends the token and its hint, and says whether it was accepted", async () => {
    const as = tokenServer(tokens());
    try {
      const done = await revokeToken(fakeAuthorizationServer(as.origin), PUBLIC, {
        token: SECRET_REFRESH,
        hint: "refresh_token",
      }, deps);
      assert.equal(done, true);
      assert.equal(as.seen[0]!.path, "/revoke");
      assert.deepEqual(form(as.seen[0]!.body), {
        token: SECRET_REFRESH,
        token_type_hint: "refresh_token",
        client_id: "vestibule",
      });
    } finally {
      await as.close();
    }
  });

  await t.step("false when the server refuses", async () => {
    const as = serveFake({ "/revoke": json(() => ({ error: "unsupported_token_type" }), 400) });
    try {
      assert.equal(
        await revokeToken(fakeAuthorizationServer(as.origin), PUBLIC, {
          token: "t",
          hint: "access_token",
        }, deps),
        false,
      );
    } finally {
      await as.close();
    }
  });

  await t.step("false without asking when the server has no revocation endpoint", async () => {
    const recording = recordingFetch();
    const done = await revokeToken(
      fakeAuthorizationServer("https://as.example", { revocationEndpoint: null }),
      PUBLIC,
      { token: "t", hint: "access_token" },
      { ...deps, fetch: recording.fetch },
    );
    assert.equal(done, false);
    assert.deepEqual(recording.urls, []);
  });
});

Deno.test("each call to the authorization server has a 10 s budget", async () => {
  const signals: AbortSignal[] = [];
  const server = fakeAuthorizationServer("https://as.example");
  const fetching = {
    ...deps,
    fetch: ((_input: string | URL | Request, init?: RequestInit) => {
      signals.push(init!.signal!);
      return Promise.reject(new TypeError("no network here"));
    }) as typeof fetch,
  };
  const asked = await recordTimeouts(async () => {
    await registerClient(
      server,
      { redirectUri: "https://a.example/cb", clientName: "V" },
      fetching,
    );
    await exchangeCode(server, PUBLIC, {
      code: "c",
      codeVerifier: "v",
      redirectUri: "https://a.example/cb",
      resource: RESOURCE,
    }, fetching);
    await refreshTokens(server, PUBLIC, { refreshToken: "r", resource: RESOURCE }, fetching);
    await revokeToken(server, PUBLIC, { token: "t", hint: "refresh_token" }, fetching);
  });
  assert.deepEqual(asked.map((a) => a.ms), [10_000, 10_000, 10_000, 10_000]);
  assert.deepEqual(signals, asked.map((a) => a.signal));
});
