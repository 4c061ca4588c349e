// Vestibule as an OAuth client at an upstream's token and revocation endpoints, against a small
// authorization server on loopback: code exchange, refresh and its failures, revocation.
import assert from "node:assert/strict";
import {
  type ClientCredentials,
  exchangeCode,
  refreshTokens,
  revokeToken,
} from "../../../src/gateway/connect/oauth_client.ts";
import {
  deps,
  fakeAuthorizationServer,
  json,
  NOW,
  PUBLIC,
  recordingFetch,
  RESOURCE,
  type Route,
  SECRET_CODE,
  serveFake,
} from "./fakes.ts";

const SECRET_REFRESH = "refresh-71c2-never-shown";

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

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
