// The official MCP SDK v1 client (1.32.2), unmodified, registered as its own example registers
// (with refresh_token), takes the whole journey: first consent, tools, an upstream tool (step-up),
// a second upstream's tool (another step-up), the first again. On each 403 insufficient_scope it
// first refreshes without asking for the new scope; the refresh is refused with invalid_grant
// (the resource just demanded a scope the grant lacks, oauth/step_up.ts), so it drops its tokens
// and sends the person to the consent page with the challenged scope. The person answers every
// page as presented.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { assertConsents, journeyFixture, sumOf } from "./journey_support.ts";
import { MemoryProvider } from "./memory_provider.ts";

Deno.test("MCP SDK 1.32.2 with a refresh token: every step-up reaches the person", async (t) => {
  const j = await journeyFixture();
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
  const connect = () => ({
    client: new Client({ name: "vestibule-step-up", version: "1.0.0" }),
    transport: new StreamableHTTPClientTransport(j.mcpUrl, {
      authProvider: provider,
      fetch: recordingFetch,
    }),
  });
  let { client, transport } = connect();
  /** The person consents to what the client asked last; the client finishes with the code. */
  const authorize = async () => {
    const back = await j.consentAsPresented(provider.authorizationUrls.at(-1)!);
    await transport.finishAuth(back.searchParams.get("code")!);
  };
  /** What the application does with the SDK's UnauthorizedError: the person, then once more. */
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
        names.push(...page.tools.map((tool: { name: string }) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      assert.ok(names.includes("alpha__add") && names.includes("beta__add"), names.join(" "));
    });

    await t.step("alpha__add: a refused refresh, then the step-up consent", async () => {
      seen.length = 0;
      assert.equal(sumOf(await callGranting("alpha__add")), 42);
      assert.ok(seen.includes("POST /api/mcp 403"), seen.join("\n"));
      assert.ok(seen.includes("POST /api/auth/oauth2/token 400"), seen.join("\n"));
      const stepUp = provider.authorizationUrls.at(-1)!;
      assert.equal(stepUp.searchParams.get("scope"), "app.access upstream.alpha");
      assert.equal(provider.tokens()?.scope, "app.access upstream.alpha");
      assert.ok(provider.tokens()?.refresh_token);
    });

    await t.step("beta__add: another step-up keeps alpha", async () => {
      assert.equal(sumOf(await callGranting("beta__add")), 42);
      const stepUp = provider.authorizationUrls.at(-1)!;
      assert.equal(stepUp.searchParams.get("scope"), "app.access upstream.alpha upstream.beta");
      assert.equal(provider.tokens()?.scope, "app.access upstream.alpha upstream.beta");
    });

    await t.step("alpha__add again, with no consent", async () => {
      const before = provider.authorizationUrls.length;
      assert.equal(
        sumOf(await client.callTool({ name: "alpha__add", arguments: { a: 1, b: 2 } })),
        3,
      );
      assert.equal(provider.authorizationUrls.length, before);
      assertConsents(j.consents);
      assert.equal(j.alpha.calls, 2);
      assert.equal(j.beta.calls, 1);
    });

    await t.step("the refresh token the last consent issued refreshes as usual", async () => {
      const response = await fetch(`${j.fx.auth}/api/auth/oauth2/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "refresh_token",
          client_id: provider.clientInformation()!.client_id,
          refresh_token: provider.tokens()!.refresh_token!,
        }),
      });
      assert.equal(response.status, 200);
      assert.equal((await response.json()).scope, "app.access upstream.alpha upstream.beta");
    });
  } finally {
    await client.close();
    await j.close();
  }
});
