// The OAuth-protected upstream (testkit/oauth_upstream.ts) driven by hand with fetch, as
// Vestibule's OAuth client will drive it: challenge, discovery, registration, PKCE sign-in,
// tokens for the MCP resource, refresh, revocation, expiry.
import assert from "node:assert/strict";
import { base64url, randomSecret, sha256 } from "../../src/secrets.ts";
import { type OAuthUpstream, startOAuthUpstream } from "../../testkit/oauth_upstream.ts";

const REDIRECT_URI = "http://127.0.0.1:9/callback";

interface Tokens {
  readonly access_token: string;
  readonly refresh_token?: string;
  readonly token_type: string;
  readonly expires_in: number;
  readonly scope?: string;
}

interface ProviderMetadata {
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly revocation_endpoint: string;
  readonly registration_endpoint?: string;
}

async function discover(upstream: OAuthUpstream): Promise<ProviderMetadata> {
  const response = await fetch(`${upstream.issuer}/.well-known/openid-configuration`);
  assert.equal(response.status, 200);
  return await response.json();
}

async function register(metadata: ProviderMetadata): Promise<string> {
  const response = await fetch(metadata.registration_endpoint!, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Vestibule",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { client_id: string }).client_id;
}

async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomSecret();
  return { verifier, challenge: base64url(await sha256(verifier)) };
}

/** Signs `login` in through the provider's pages and exchanges the code: the first tokens. */
async function connect(
  upstream: OAuthUpstream,
  metadata: ProviderMetadata,
  clientId: string,
  login: string,
  clientAuth: Record<string, string> = {},
): Promise<Tokens> {
  const { verifier, challenge } = await pkce();
  const authorization = new URL(metadata.authorization_endpoint);
  authorization.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: "mcp",
    state: "the-state",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: upstream.mcpUrl,
  }).toString();
  const callback = await upstream.authorize(authorization.href, login);
  assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT_URI);
  assert.equal(callback.searchParams.get("state"), "the-state");
  assert.equal(callback.searchParams.get("iss"), upstream.issuer);
  const code = callback.searchParams.get("code");
  assert.ok(code, callback.href);
  const answer = await tokenRequest(metadata, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
    client_id: clientId,
    resource: upstream.mcpUrl,
  }, clientAuth);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as unknown as Tokens;
}

async function tokenRequest(
  metadata: ProviderMetadata,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(metadata.token_endpoint, {
    method: "POST",
    headers,
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: await response.json() };
}

/** initialize, then tools/call `name` with the token: the call's result, or the HTTP status. */
async function callTool(
  upstream: OAuthUpstream,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ status: number; result?: Record<string, unknown> }> {
  const post = async (message: Record<string, unknown>) => {
    const response = await fetch(upstream.mcpUrl, {
      method: "POST",
      headers: {
        "Authorization": `Bearer ${token}`,
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...message }),
    });
    const text = await response.text();
    const data = text.split("\n").find((line) => line.startsWith("data: "));
    return { status: response.status, body: data ? JSON.parse(data.slice(6)) : null };
  };
  const opened = await post({
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  if (opened.status !== 200) return { status: opened.status };
  const called = await post({ id: 2, method: "tools/call", params: { name, arguments: args } });
  return { status: called.status, result: called.body?.result };
}

Deno.test("the OAuth upstream challenges, registers, signs alice in, and serves her tools with its tokens", async () => {
  const upstream = await startOAuthUpstream();
  try {
    const refused = await fetch(upstream.mcpUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await refused.body?.cancel();
    assert.equal(refused.status, 401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    const metadataUrl = /^Bearer .*resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    assert.ok(metadataUrl, challenge);
    assert.match(challenge, /scope="mcp"/);

    const resource = await (await fetch(metadataUrl)).json();
    assert.equal(resource.resource, upstream.mcpUrl);
    assert.deepEqual(resource.authorization_servers, [upstream.issuer]);
    assert.ok(resource.scopes_supported.includes("mcp"));

    const metadata = await discover(upstream);
    assert.equal(metadata.issuer, upstream.issuer);
    const extra = metadata as unknown as Record<string, unknown>;
    assert.equal(extra.authorization_response_iss_parameter_supported, true);
    assert.deepEqual(extra.code_challenge_methods_supported, ["S256"]);

    const clientId = await register(metadata);
    assert.equal(upstream.seen.registration, 1);

    const tokens = await connect(upstream, metadata, clientId, "alice");
    assert.equal(upstream.seen.authorizationCode, 1);
    assert.equal(tokens.token_type, "Bearer");
    assert.ok(tokens.refresh_token, "a refresh token without offline_access");

    const whoami = await callTool(upstream, tokens.access_token, "whoami");
    assert.equal(whoami.status, 200);
    assert.deepEqual(whoami.result?.content, [{ type: "text", text: "alice" }]);
    assert.deepEqual(whoami.result?.structuredContent, { sub: "alice" });
    const echo = await callTool(upstream, tokens.access_token, "echo", { text: "hello" });
    assert.deepEqual(echo.result?.content, [{ type: "text", text: "hello" }]);
    assert.equal(upstream.seen.mcpCalls, 4);

    const refreshed = await tokenRequest(metadata, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: upstream.mcpUrl,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(upstream.seen.refreshToken, 1);
    const next = refreshed.body as unknown as Tokens;
    assert.ok(next.refresh_token && next.refresh_token !== tokens.refresh_token, "rotated");
    assert.equal((await callTool(upstream, next.access_token, "whoami")).status, 200);

    const revoked = await fetch(metadata.revocation_endpoint, {
      method: "POST",
      body: new URLSearchParams({
        token: next.refresh_token!,
        token_type_hint: "refresh_token",
        client_id: clientId,
      }),
    });
    await revoked.body?.cancel();
    assert.equal(revoked.status, 200);
    assert.equal(upstream.seen.revocation, 1);
    const afterRevocation = await tokenRequest(metadata, {
      grant_type: "refresh_token",
      refresh_token: next.refresh_token!,
      client_id: clientId,
      resource: upstream.mcpUrl,
    });
    assert.equal(afterRevocation.body.error, "invalid_grant");
  } finally {
    await upstream.close();
  }
});

Deno.test("the OAuth upstream's refresh tokens answer invalid_grant once the person's grants are ended", async () => {
  const upstream = await startOAuthUpstream();
  try {
    const metadata = await discover(upstream);
    const clientId = await register(metadata);
    const alice = await connect(upstream, metadata, clientId, "alice");
    const bob = await connect(upstream, metadata, clientId, "bob");
    await upstream.revokeGrantsOf("alice");
    const refresh = (tokens: Tokens) =>
      tokenRequest(metadata, {
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
        resource: upstream.mcpUrl,
      });
    const refused = await refresh(alice);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, "invalid_grant");
    assert.equal((await refresh(bob)).status, 200);
    assert.equal(upstream.seen.refreshToken, 2);
  } finally {
    await upstream.close();
  }
});

Deno.test("the OAuth upstream's access tokens are refused once their short lifetime is over", async () => {
  const upstream = await startOAuthUpstream({ accessTokenTtlSeconds: 2 });
  try {
    const metadata = await discover(upstream);
    const tokens = await connect(upstream, metadata, await register(metadata), "alice");
    assert.equal(tokens.expires_in, 2);
    assert.equal((await callTool(upstream, tokens.access_token, "whoami")).status, 200);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = (await callTool(upstream, tokens.access_token, "whoami")).status;
    }
    assert.equal(status, 401);
  } finally {
    await upstream.close();
  }
});

Deno.test("the OAuth upstream takes an operator's client without registration, wants PKCE of it too, and holds token requests until released", async () => {
  const upstream = await startOAuthUpstream({
    registration: false,
    staticClient: { id: "vestibule", secret: "s3cret", redirectUris: [REDIRECT_URI] },
  });
  try {
    const metadata = await discover(upstream);
    assert.equal(metadata.registration_endpoint, undefined);
    const withoutPkce = new URL(metadata.authorization_endpoint);
    withoutPkce.search = new URLSearchParams({
      response_type: "code",
      client_id: "vestibule",
      redirect_uri: REDIRECT_URI,
      scope: "mcp",
      resource: upstream.mcpUrl,
    }).toString();
    const refused = await upstream.authorize(withoutPkce.href, "carol");
    assert.equal(refused.searchParams.get("error"), "invalid_request");
    assert.equal(refused.searchParams.get("code"), null);

    const basic = { Authorization: `Basic ${btoa("vestibule:s3cret")}` };
    const tokens = await connect(upstream, metadata, "vestibule", "carol", basic);
    assert.ok(tokens.refresh_token);

    const hold = upstream.holdTokenRequests();
    const answer = tokenRequest(metadata, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      resource: upstream.mcpUrl,
    }, basic);
    await hold.held;
    assert.equal(upstream.seen.refreshToken, 1);
    hold.release();
    assert.equal((await answer).status, 200);
  } finally {
    await upstream.close();
  }
});
