import assert from "node:assert/strict";
import { decodeJwt, generateKeyPair, SignJWT } from "jose";
import { revokeGrant } from "../../../src/oauth/grants.ts";
import { SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { createSigningKeys } from "../../../src/oauth/signing_keys.ts";
import { mcpPost } from "../support/mcp_helpers.ts";
import { DECISION_TTL_MS } from "../../../src/workspace/mcp/bearer.ts";
import {
  exchange,
  oauthFixture,
  obtainCode,
  ownerBrowser,
  refresh,
  registerClient,
} from "../support/oauth_helpers.ts";
import { PROTOCOL_VERSION, startWorkspaceServer } from "../support/workspace_support.ts";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
/** "Within seconds": a fixed bound, not the implementation's own cache lifetime. */
const REVOCATION_DELAY_MS = 2_000;

Deno.test("workspace protected-resource metadata (RFC 9728)", async () => {
  const ws = await startWorkspaceServer();
  try {
    const { apiUrl, authUrl, baseUrl } = ws.server;
    const response = await fetch(`${apiUrl}/.well-known/oauth-protected-resource`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
    assert.equal(response.headers.get("Content-Type"), "application/json");
    assert.deepEqual(await response.json(), {
      resource: apiUrl,
      authorization_servers: [`${authUrl}/api/auth`],
      // Every scope but offline_access, which is the authorization server's business.
      scopes_supported: SUPPORTED_SCOPES.filter((scope) => scope !== "offline_access"),
      bearer_methods_supported: ["header"],
      resource_name: "Vestibule workspace",
      resource_documentation: `${baseUrl}/developers`,
    });
    const preflight = await fetch(`${apiUrl}/.well-known/oauth-protected-resource`, {
      method: "OPTIONS",
      headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "GET" },
    });
    await preflight.body?.cancel();
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), "*");
  } finally {
    await ws.close();
  }
});

Deno.test("workspace bearer checks", async (t) => {
  let clock = Date.now();
  const ws = await startWorkspaceServer({}, { now: () => clock });
  const { apiUrl } = ws.server;
  const metadata = `resource_metadata="${apiUrl}/.well-known/oauth-protected-resource"`;
  const noToken = `Bearer ${metadata}, scope="app.access"`;
  const invalid = `Bearer ${metadata}, scope="app.access", error="invalid_token"`;
  const { token: valid } = await ws.token(["app.access"]);
  const claims = decodeJwt(valid);
  const key = await createSigningKeys({ store: ws.server.store, now: () => clock }).current();
  const sign = (changes: Record<string, unknown>, kid = key.kid, privateKey = key.privateKey) =>
    new SignJWT({ ...claims, ...changes })
      .setProtectedHeader({ alg: "ES256", kid, typ: "at+jwt" })
      .sign(privateKey);
  const foreign = await generateKeyPair("ES256");

  const unauthorized = [
    { name: "no Authorization header", header: null, challenge: noToken, error: "invalid_request" },
    {
      name: "another scheme",
      header: "Basic dXNlcjpwYXNz",
      challenge: noToken,
      error: "invalid_request",
    },
    { name: "a malformed token", header: "Bearer not a token", challenge: invalid },
    { name: "a token that is no JWT", header: "Bearer abc.def", challenge: invalid },
    {
      name: "a bad signature",
      header: `Bearer ${valid.slice(0, -4)}${valid.endsWith("AAAA") ? "BBBB" : "AAAA"}`,
      challenge: invalid,
    },
    {
      name: "an unknown kid",
      header: `Bearer ${await sign({}, "no-such-kid")}`,
      challenge: invalid,
    },
    {
      name: "a foreign key under our kid",
      header: `Bearer ${await sign({}, key.kid, foreign.privateKey)}`,
      challenge: invalid,
    },
    {
      name: "a wrong iss",
      header: `Bearer ${await sign({ iss: "https://evil.example/api/auth" })}`,
      challenge: invalid,
    },
    {
      name: "a wrong aud",
      header: `Bearer ${await sign({ aud: `${apiUrl}/api` })}`,
      challenge: invalid,
    },
    {
      name: "an aud array",
      header: `Bearer ${await sign({ aud: [apiUrl, "https://x.example"] })}`,
      challenge: invalid,
    },
    {
      name: "an aud array of only {api_url}",
      header: `Bearer ${await sign({ aud: [apiUrl] })}`,
      challenge: invalid,
    },
    {
      name: "an aud of {api_url} with a trailing slash",
      header: `Bearer ${await sign({ aud: `${apiUrl}/` })}`,
      challenge: invalid,
    },
    {
      name: "an expired token",
      header: `Bearer ${await sign({ iat: claims.iat! - 7200, exp: claims.iat! - 3600 })}`,
      challenge: invalid,
    },
  ];
  try {
    for (const c of unauthorized) {
      await t.step(`${c.name} is 401 with the bearer challenge`, async () => {
        const response = await ws.post(
          null,
          LIST,
          c.header === null ? {} : { Authorization: c.header },
        );
        assert.equal(response.status, 401);
        assert.equal(response.headers.get("WWW-Authenticate"), c.challenge);
        assert.equal(response.headers.get("Content-Type"), "application/json");
        const body = await response.json();
        assert.equal(body.error, c.error ?? "invalid_token");
        assert.equal(typeof body.error_description, "string");
      });
    }

    await t.step("a valid token lists tools", async () => {
      const response = await ws.post(valid, LIST);
      assert.equal(response.status, 200);
      assert.ok((await response.json()).result.tools.length > 0);
    });

    await t.step("a token in the query string is never accepted", async () => {
      const response = await fetch(`${apiUrl}/api/mcp?access_token=${valid}`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-06-18",
        },
        body: JSON.stringify(LIST),
      });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("WWW-Authenticate"), invalid);
      assert.match((await response.json()).error_description, /never in the query string/);
    });

    await t.step("a revoked grant is 401", async () => {
      const { token, grantId } = await ws.token(["app.access"]);
      assert.equal((await ws.post(token, LIST)).status, 200);
      await revokeGrant(ws.server.store, grantId);
      // DESIGN.md: revocation takes effect within seconds (a decision is reused briefly).
      clock += REVOCATION_DELAY_MS;
      const response = await ws.post(token, LIST);
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("WWW-Authenticate"), invalid);
      await response.body?.cancel();
    });

    await t.step("a lapsed membership is a plain 403 without a challenge", async () => {
      const other = await ws.accounts.addMember(ws.businessId, "leaver@example.com", "member");
      const { token } = await ws.token(["app.access"], { accountId: other.accountId });
      assert.equal((await ws.post(token, LIST)).status, 200);
      await ws.accounts.removeMember(ws.businessId, other.accountId);
      clock += REVOCATION_DELAY_MS;
      const response = await ws.post(token, LIST);
      assert.equal(response.status, 403);
      assert.equal(response.headers.get("WWW-Authenticate"), null);
      assert.equal((await response.json()).error, "access_denied");
    });

    await t.step("a token without app.access is 403 insufficient_scope", async () => {
      const { token } = await ws.token(["members.read"]);
      const response = await ws.post(token, LIST);
      assert.equal(response.status, 403);
      assert.equal(
        response.headers.get("WWW-Authenticate"),
        `Bearer ${metadata}, scope="app.access", error="insufficient_scope"`,
      );
      assert.equal((await response.json()).error, "insufficient_scope");
    });

    await t.step("bearer checks come before the JSON-RPC is read", async () => {
      const response = await ws.post(null, "{not json");
      assert.equal(response.status, 401);
      await response.body?.cancel();
    });

    await t.step("a trusted browser origin can read the challenge", async () => {
      const origin = ws.server.baseUrl;
      const response = await ws.post(null, LIST, { Origin: origin });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), origin);
      assert.match(response.headers.get("Access-Control-Expose-Headers") ?? "", /WWW-Authenticate/);
      assert.match(response.headers.get("Access-Control-Expose-Headers") ?? "", /Retry-After/);
      await response.body?.cancel();
    });
  } finally {
    await ws.close();
  }
});

Deno.test("workspace transport rules", async (t) => {
  const ws = await startWorkspaceServer();
  const { token } = await ws.token(["app.access"]);
  try {
    await t.step("an untrusted origin is 403 even with a valid token", async () => {
      const response = await ws.post(token, LIST, { Origin: "https://evil.example" });
      assert.equal(response.status, 403);
      assert.match((await response.json()).error.message, /not trusted/);
    });

    await t.step(
      "CORS preflight: a trusted origin 204 with the MCP headers, another 403",
      async () => {
        const mcp = `${ws.server.apiUrl}/api/mcp`;
        const origin = ws.server.baseUrl;
        const ok = await fetch(mcp, {
          method: "OPTIONS",
          headers: {
            Origin: origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
          },
        });
        assert.equal(ok.status, 204);
        assert.equal(ok.headers.get("Access-Control-Allow-Origin"), origin);
        assert.equal(ok.headers.get("Access-Control-Allow-Methods"), "POST");
        const allowed = (ok.headers.get("Access-Control-Allow-Headers") ?? "").split(", ");
        for (
          const name of [
            "Authorization",
            "Content-Type",
            "Accept",
            "MCP-Protocol-Version",
            "Mcp-Method",
            "Mcp-Name",
          ]
        ) {
          assert.ok(allowed.includes(name), `${name} in ${allowed}`);
        }
        await ok.body?.cancel();
        const refused = await fetch(mcp, {
          method: "OPTIONS",
          headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
        });
        assert.equal(refused.status, 403);
        assert.equal(refused.headers.get("Access-Control-Allow-Origin"), null);
        const body = await refused.json();
        assert.equal(body.id, null);
        assert.match(body.error.message, /origin "https:\/\/evil.example" is not trusted/);
      },
    );

    await t.step("an unknown Host (DNS rebinding) is 403 even with a valid token", async () => {
      const body = JSON.stringify(LIST);
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: Number(new URL(ws.server.apiUrl).port),
      });
      await conn.write(new TextEncoder().encode(
        `POST /api/mcp HTTP/1.1\r\nHost: rebound.example\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
          `MCP-Protocol-Version: ${PROTOCOL_VERSION}\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      ));
      const text = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
      assert.match(text, /^HTTP\/1\.1 403/);
      assert.doesNotMatch(text, /"result"/);
    });

    await t.step("GET is 405 with Allow: POST", async () => {
      const response = await fetch(`${ws.server.apiUrl}/api/mcp`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      assert.equal(response.status, 405);
      assert.equal(response.headers.get("Allow"), "POST, OPTIONS");
      await response.body?.cancel();
    });

    await t.step("bodies over 16 KiB but within 64 KiB are read", async () => {
      const padded = { ...LIST, params: { _meta: { pad: "x".repeat(30_000) } } };
      const response = await ws.post(token, padded);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    });

    await t.step("a body over 64 KiB is 413", async () => {
      const padded = { ...LIST, params: { _meta: { pad: "x".repeat(70_000) } } };
      const response = await ws.post(token, padded);
      assert.equal(response.status, 413);
      await response.body?.cancel();
    });

    await t.step("the wrong Content-Type is 415 and a missing version header 400", async () => {
      const wrongType = await ws.post(token, LIST, { "Content-Type": "text/plain" });
      assert.equal(wrongType.status, 415);
      await wrongType.body?.cancel();
      const noVersion = await fetch(`${ws.server.apiUrl}/api/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Accept": "application/json, text/event-stream",
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify(LIST),
      });
      assert.equal(noVersion.status, 400);
      await noVersion.body?.cancel();
    });
  } finally {
    await ws.close();
  }
});

Deno.test("bogus tokens from one address are rate limited before verification", async () => {
  const ws = await startWorkspaceServer();
  try {
    const { token } = await ws.token(["app.access"]);
    const bogus = `${token.slice(0, -4)}${token.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    let limited: Response | undefined;
    for (let i = 0; i < 400 && !limited; i++) {
      const response = await ws.post(bogus, LIST);
      if (response.status === 429) limited = response;
      else {
        assert.equal(response.status, 401);
        await response.body?.cancel();
      }
    }
    assert.ok(limited, "no 429 within 400 bogus tokens");
    assert.ok(Number(limited.headers.get("Retry-After")) >= 1);
    await limited.body?.cancel();
  } finally {
    await ws.close();
  }
});

Deno.test("valid tokens behind one address spend no verification budget; refused ones do", async () => {
  let clock = Date.now();
  const ws = await startWorkspaceServer({ VESTIBULE_RATE_LIMITS: "workspace-verify=2" }, {
    now: () => clock,
  });
  const status = async (token: string) => {
    const response = await ws.post(token, LIST);
    await response.body?.cancel();
    return response.status;
  };
  try {
    // Six agents behind one egress address, two requests each at once, every round after their
    // decisions lapsed: 60 verifications against a budget of 2.
    const agents = await Promise.all(
      Array.from({ length: 6 }, (_, i) => ws.token(["app.access"], { clientId: `agent-${i}` })),
    );
    for (let round = 0; round < 5; round++) {
      clock += DECISION_TTL_MS;
      const statuses = await Promise.all(
        agents.flatMap(({ token }) => [status(token), status(token)]),
      );
      assert.deepEqual(statuses, Array(12).fill(200), `round ${round}`);
    }
    const token = agents[0]!.token;
    const bogus = `${token.slice(0, -4)}${token.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
    assert.deepEqual([await status(bogus), await status(bogus), await status(bogus)], [
      401,
      401,
      429,
    ]);
  } finally {
    await ws.close();
  }
});

Deno.test("the workspace body cap is configurable", async () => {
  const ws = await startWorkspaceServer({ VESTIBULE_WORKSPACE_MAX_BODY: "20000" });
  try {
    const { token } = await ws.token(["app.access"]);
    const padded = { ...LIST, params: { _meta: { pad: "x".repeat(25_000) } } };
    const response = await ws.post(token, padded);
    assert.equal(response.status, 413);
    assert.match((await response.json()).error.message, /exceeds 20000 bytes/);
  } finally {
    await ws.close();
  }
});

Deno.test("workspace rate limit is per subject and client", async () => {
  let t = Date.UTC(2026, 0, 1);
  const ws = await startWorkspaceServer({}, { now: () => t });
  try {
    const { token: first } = await ws.token(["app.access"], { clientId: "client-a" });
    const { token: second } = await ws.token(["app.access"], { clientId: "client-b" });
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    let limited: Response | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const response = await ws.post(first, ping);
      if (response.status === 429) limited = response;
      else await response.body?.cancel();
    }
    assert.ok(limited, "no 429 within 200 requests");
    assert.ok(Number(limited.headers.get("Retry-After")) >= 1);
    await limited.body?.cancel();
    const other = await ws.post(second, ping);
    assert.equal(other.status, 200);
    await other.body?.cancel();
    // DESIGN.md: 600 a minute per token, so six seconds buy exactly 60 more.
    t += 6_000;
    for (let i = 0; i < 60; i++) {
      const response = await ws.post(first, ping);
      assert.equal(response.status, 200, `request ${i} after six seconds`);
      await response.body?.cancel();
    }
    const over = await ws.post(first, ping);
    assert.equal(over.status, 429);
    await over.body?.cancel();
    t += 60_000;
    const later = await ws.post(first, ping);
    assert.equal(later.status, 200);
    await later.body?.cancel();
  } finally {
    await ws.close();
  }
});

Deno.test("workspace rate limit: a refreshed token spends its predecessor's budget", async () => {
  // docs/workspace.md: keyed by token subject and client, so that refreshing does not reset the budget.
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "on" });
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com");
    const { code, verifier } = await obtainCode(owner, fx, client);
    const first = await exchange(fx, client, code, verifier);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    const refreshed = await refresh(fx, client, first.json.refresh_token);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
    const before = String(first.json.access_token);
    const after = String(refreshed.json.access_token);
    assert.notEqual(after, before);
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    const post = (accessToken: string) =>
      mcpPost(`${fx.server.apiUrl}/api/mcp`, ping, {
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        Authorization: `Bearer ${accessToken}`,
      });
    const works = await post(after);
    assert.equal(works.status, 200, "the refreshed token is good");
    await works.body?.cancel();
    let limited: Response | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const response = await post(before);
      if (response.status === 429) limited = response;
      else await response.body?.cancel();
    }
    assert.ok(limited, "no 429 within 200 requests");
    await limited.body?.cancel();
    const refused = await post(after);
    assert.equal(refused.status, 429, "one bucket for both tokens");
    assert.ok(Number(refused.headers.get("Retry-After")) >= 1);
    await refused.body?.cancel();
  } finally {
    await fx.close();
  }
});

Deno.test("a signed-in browser's cookies are no workspace authorization", async () => {
  const fx = await oauthFixture();
  try {
    const owner = await ownerBrowser(fx, "owner@example.com");
    assert.ok((await owner.get(`${fx.auth}/account`)).status === 200, "signed in");
    const cookies = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const response = await fetch(`${fx.server.apiUrl}/api/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        Cookie: cookies,
      },
      body: JSON.stringify(LIST),
    });
    assert.equal(response.status, 401);
    assert.equal((await response.json()).error, "invalid_request");
  } finally {
    await fx.close();
  }
});
