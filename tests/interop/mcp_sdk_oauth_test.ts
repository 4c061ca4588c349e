// Interop, end to end: the official MCP TypeScript SDK client (nobody here wrote it) with its
// OAuth client provider meets the workspace endpoint's 401, discovers the protected-resource
// and authorization-server metadata, registers, sends the human through authorization (the
// test plays the human over HTTP, reading the `file:` outbox), exchanges the code, lists
// every tool across pages, runs the connection test by following nextAction, and finally
// meets the step-up challenge for a tool outside its scopes.
import { runConnectionTest } from "./connection_check.ts";
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { consent, oauthFixture, ownerBrowser } from "../blackbox/support/oauth_helpers.ts";
import { MemoryProvider } from "./memory_provider.ts";

for (const mode of ["json", "sse"] as const) {
  Deno.test(`MCP SDK client with OAuth against the workspace endpoint (${mode})`, async (t) => {
    const fx = await oauthFixture({ VESTIBULE_MCP_RESPONSE: mode });
    const { apiUrl, authUrl } = fx.server;
    const mcpUrl = new URL(`${apiUrl}/api/mcp`);
    // No refresh_token grant: a step-up must come back to the human, not be refreshed away.
    const provider = new MemoryProvider("http://127.0.0.1:8976/callback");
    const seen: string[] = [];
    const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const url = new URL(input instanceof Request ? input.url : input);
      seen.push(`${init?.method ?? "GET"} ${url.origin}${url.pathname} ${response.status}`);
      return response;
    };
    const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
    let client = new Client({ name: "vestibule-interop", version: "1.0.0" });
    let transport = new StreamableHTTPClientTransport(mcpUrl, {
      authProvider: provider,
      fetch: recordingFetch,
    });

    /** The human opens the authorization URL, consents, and the agent gets the code back. */
    const authorizeAsHuman = async (url: URL) => {
      const location = await consent(human, fx, url.href);
      assert.equal(`${location.origin}${location.pathname}`, provider.redirectUrl);
      assert.equal(location.searchParams.get("state"), provider.states.at(-1));
      assert.equal(location.searchParams.get("iss"), `${authUrl}/api/auth`);
      const code = location.searchParams.get("code");
      assert.ok(code, `no code in ${location}`);
      return code;
    };

    try {
      await t.step("meets the 401, discovers, registers and sends the human", async () => {
        await assert.rejects(client.connect(transport), UnauthorizedError);
        assert.ok(seen.includes(`POST ${apiUrl}/api/mcp 401`), seen.join("\n"));
        assert.ok(
          seen.includes(`GET ${apiUrl}/.well-known/oauth-protected-resource 200`),
          seen.join("\n"),
        );
        assert.ok(
          seen.some((s) => s.startsWith(`GET ${authUrl}/.well-known/oauth-authorization-server`)),
          seen.join("\n"),
        );
        assert.ok(seen.includes(`POST ${authUrl}/api/auth/oauth2/register 201`), seen.join("\n"));
        const [url] = provider.authorizationUrls;
        assert.ok(url);
        assert.equal(`${url.origin}${url.pathname}`, `${authUrl}/api/auth/oauth2/authorize`);
        assert.equal(url.searchParams.get("scope"), "app.access");
        assert.equal(url.searchParams.get("resource"), apiUrl);
        assert.equal(url.searchParams.get("code_challenge_method"), "S256");
      });

      await t.step("exchanges the code and connects", async () => {
        const code = await authorizeAsHuman(provider.authorizationUrls[0]!);
        await transport.finishAuth(code);
        assert.equal(provider.tokens()?.scope, "app.access");
        assert.equal(provider.tokens()?.refresh_token, undefined);
        client = new Client({ name: "vestibule-interop", version: "1.0.0" });
        transport = new StreamableHTTPClientTransport(mcpUrl, {
          authProvider: provider,
          fetch: recordingFetch,
        });
        await client.connect(transport);
        assert.equal(client.getServerVersion()?.name, "127.0.0.1/workspace");
      });

      const names: string[] = [];
      await t.step("lists every workspace tool across pages", async () => {
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor });
          for (const tool of page.tools) {
            names.push(tool.name);
            assert.equal(typeof tool._meta?.["vestibule/scope"], "string", tool.name);
          }
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== undefined);
        assert.ok(pages >= 2, `one page only (${names.length} tools)`);
        assert.equal(new Set(names).size, names.length);
        for (
          const name of ["get_agent_connection_setup", "verify_agent_connection", "list_members"]
        ) {
          assert.ok(names.includes(name), name);
        }
      });

      await t.step("runs the connection test by following nextAction", async () => {
        await runConnectionTest((request) => client.callTool(request));
      });

      await t.step("a tool outside the granted scopes meets the step-up challenge", async () => {
        const before = provider.authorizationUrls.length;
        await assert.rejects(
          client.callTool({ name: "list_members", arguments: {} }),
          UnauthorizedError,
        );
        assert.ok(seen.includes(`POST ${apiUrl}/api/mcp 403`), seen.join("\n"));
        const stepUp = provider.authorizationUrls.at(-1)!;
        assert.equal(provider.authorizationUrls.length, before + 1);
        // Everything granted plus the missing scope: re-authorizing loses nothing.
        assert.equal(stepUp.searchParams.get("scope"), "app.access members.read");
        assert.equal(stepUp.searchParams.get("resource"), apiUrl);
      });

      await t.step("after the human grants it, the same client may call the tool", async () => {
        const stale = provider.tokens()!.access_token;
        const code = await authorizeAsHuman(provider.authorizationUrls.at(-1)!);
        await transport.finishAuth(code);
        assert.equal(provider.tokens()?.scope, "app.access members.read");
        const members = await client.callTool({ name: "list_members", arguments: {} });
        assert.notEqual(members.isError, true, JSON.stringify(members));
        const { members: list } = members.structuredContent as { members: { email: string }[] };
        assert.deepEqual(list.map((m) => m.email), ["owner@example.com"]);
        // The step-up widened the client's one grant: the earlier token is rotated out.
        assert.equal((await fx.verify(stale)).ok, false);
        const account = await human.get(`${authUrl}/account`);
        assert.equal(account.text.match(/aria-label="Revoke SDK interop agent"/g)?.length, 1);
      });
    } finally {
      await client.close();
      await fx.close();
    }
  });
}
