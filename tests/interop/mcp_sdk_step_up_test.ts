// The step-up the connection guide and the developer reference prescribe, checked with the
// official MCP SDK client they name: a client holding a refresh token meets the SDK pitfall
// on insufficient_scope (it refreshes, retries and gives up without asking the human), and
// the documented workaround (forget the tokens, auth() with the challenged scope) gets the
// human's consent for the wider scope.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { auth, UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { consent, oauthFixture, ownerBrowser } from "../blackbox/support/oauth_helpers.ts";
import { MemoryProvider } from "./memory_provider.ts";

Deno.test("MCP SDK 1.32.2 with a refresh token: the guide's step-up workaround reaches the human", async (t) => {
  const fx = await oauthFixture();
  const serverUrl = new URL(`${fx.server.apiUrl}/api/mcp`);
  const provider = new MemoryProvider("http://127.0.0.1:8976/callback", [
    "authorization_code",
    "refresh_token",
  ]);
  const seen: string[] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    seen.push(`${init?.method ?? "GET"} ${url.pathname} ${response.status}`);
    return response;
  };
  const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
  const codeFrom = async (url: URL) =>
    new URL(await consent(human, fx, url.href)).searchParams.get("code")!;
  const connect = () => ({
    client: new Client({ name: "vestibule-step-up", version: "1.0.0" }),
    transport: new StreamableHTTPClientTransport(serverUrl, {
      authProvider: provider,
      fetch: recordingFetch,
    }),
  });
  let { client, transport } = connect();
  try {
    await assert.rejects(client.connect(transport), UnauthorizedError);
    await transport.finishAuth(await codeFrom(provider.authorizationUrls[0]!));
    assert.equal(provider.tokens()?.scope, "app.access");
    assert.ok(provider.tokens()?.refresh_token, "a refresh token was issued");
    ({ client, transport } = connect());
    await client.connect(transport);

    await t.step("the pitfall: a refresh instead of the human, then the SDK gives up", async () => {
      seen.length = 0;
      const error = await client.callTool({ name: "list_members", arguments: {} }).then(
        () => assert.fail("the call went through without members.read"),
        (e: unknown) => e,
      );
      assert.ok(error instanceof StreamableHTTPError, String(error));
      assert.equal(error.code, 403);
      assert.match(error.message, /Server returned 403 after trying upscoping/);
      assert.ok(seen.includes("POST /api/auth/oauth2/token 200"), seen.join("\n"));
      assert.equal(provider.authorizationUrls.length, 1, "the human was never asked");
    });

    await t.step(
      "the workaround: forget the tokens, auth() with the challenged scope",
      async () => {
        const scope = `${provider.tokens()?.scope} members.read`;
        provider.forgetTokens();
        assert.equal(await auth(provider, { serverUrl, scope }), "REDIRECT");
        const stepUp = provider.authorizationUrls.at(-1)!;
        assert.equal(stepUp.searchParams.get("scope"), "app.access members.read");
        assert.equal(stepUp.searchParams.get("resource"), fx.server.apiUrl);
        await transport.finishAuth(await codeFrom(stepUp));
        assert.equal(provider.tokens()?.scope, "app.access members.read");
        const members = await client.callTool({ name: "list_members", arguments: {} });
        assert.notEqual(members.isError, true, JSON.stringify(members));
      },
    );
  } finally {
    await client.close();
    await fx.close();
  }
});
