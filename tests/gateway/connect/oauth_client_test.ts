// Vestibule as an OAuth client of an upstream's authorization server, against a small one on
// loopback: registration, the authorization URL and its response, and the budget of each call.
// Tokens and revocation are in oauth_client_tokens_test.ts.
import assert from "node:assert/strict";
import {
  authorizationUrl,
  checkAuthorizationResponse,
  exchangeCode,
  refreshTokens,
  registerClient,
  revokeToken,
} from "../../../src/gateway/connect/oauth_client.ts";
import {
  deps,
  fakeAuthorizationServer,
  json,
  PUBLIC,
  recordingFetch,
  recordTimeouts,
  RESOURCE,
  SECRET_CODE,
  serveFake,
} from "./fakes.ts";

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
