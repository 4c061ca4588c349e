// The official MCP SDK v2 client (@modelcontextprotocol/client 2.4.0), unmodified and registered
// with refresh_token, takes the whole journey: first consent, tools, an upstream tool (step-up),
// a second upstream's tool (another step-up), the first again. On 403 insufficient_scope it
// merges the challenge's scope with what it holds and, that being wider, authorizes without
// refreshing; the person answers every page as presented.
import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { assertConsents, journeyFixture, scopeSet, sumOf } from "./journey_support.ts";
import { MemoryProvider2 } from "./memory_provider2.ts";

Deno.test("MCP SDK v2 2.4.0 with a refresh token: every step-up reaches the person", async (t) => {
  const j = await journeyFixture();
  const provider = new MemoryProvider2("http://127.0.0.1:8977/callback", [
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
  const connect = () => ({
    client: new Client({ name: "vestibule-step-up-v2", version: "2.0.0" }),
    transport: new StreamableHTTPClientTransport(j.mcpUrl, {
      authProvider: provider,
      fetch: recordingFetch,
    }),
  });
  let { client, transport } = connect();
  const authorize = async () => {
    const back = await j.consentAsPresented(provider.authorizationUrls.at(-1)!);
    await transport.finishAuth(back.searchParams);
  };
  const callGranting = async (name: string) => {
    try {
      return await client.callTool({ name, arguments: { a: 40, b: 2 } });
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      await authorize();
      return await client.callTool({ name, arguments: { a: 40, b: 2 } });
    }
  };
  try {
    await t.step("registers with refresh_token, the person consents, it connects", async () => {
      await assert.rejects(client.connect(transport), UnauthorizedError);
      await authorize();
      assert.equal(provider.tokens()?.scope, "app.access");
      assert.ok(provider.tokens()?.refresh_token, "a refresh token was issued");
      ({ client, transport } = connect());
      await client.connect(transport);
    });

    await t.step("lists the upstreams' tools under their names", async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        names.push(...page.tools.map((tool) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.ok(names.includes("alpha__add") && names.includes("beta__add"), names.join(" "));
    });

    await t.step("alpha__add: straight to the step-up consent, no refresh", async () => {
      seen.length = 0;
      assert.equal(sumOf(await callGranting("alpha__add")), 42);
      assert.ok(seen.includes("POST /api/mcp 403"), seen.join("\n"));
      assert.ok(!seen.includes("POST /api/auth/oauth2/token 400"), seen.join("\n"));
      const stepUp = provider.authorizationUrls.at(-1)!;
      // It adds offline_access itself (the authorization server offers it, and it holds a
      // refresh-token registration): a new scope here, so it starts ticked too.
      const asked = ["app.access", "offline_access", "upstream.alpha"];
      assert.deepEqual(scopeSet(stepUp.searchParams.get("scope")), asked);
      assert.deepEqual(scopeSet(provider.tokens()?.scope), asked);
    });

    await t.step("beta__add: another step-up keeps alpha", async () => {
      assert.equal(sumOf(await callGranting("beta__add")), 42);
      const stepUp = provider.authorizationUrls.at(-1)!;
      const asked = ["app.access", "offline_access", "upstream.alpha", "upstream.beta"];
      assert.deepEqual(scopeSet(stepUp.searchParams.get("scope")), asked);
      assert.deepEqual(scopeSet(provider.tokens()?.scope), asked);
    });

    await t.step("alpha__add again, with no consent", async () => {
      const before = provider.authorizationUrls.length;
      const again = await client.callTool({ name: "alpha__add", arguments: { a: 1, b: 2 } });
      assert.equal(sumOf(again), 3);
      assert.equal(provider.authorizationUrls.length, before);
      assertConsents(j.consents, ["offline_access"]);
    });
  } finally {
    await client.close();
    await j.close();
  }
});
