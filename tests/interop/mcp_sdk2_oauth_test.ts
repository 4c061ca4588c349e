// Interop, end to end in MCP 2026-07-28: the official MCP TypeScript SDK v2 client (nobody here
// wrote it), pinned to 2026-07-28 and in `auto` mode, with its OAuth client provider, meets the
// workspace endpoint's 401 at server/discover, discovers, registers (with the
// application_type it derives), sends the human through authorization (the test plays the
// human over HTTP, reading the `file:` outbox), checks `iss` (RFC 9207) and exchanges the
// code, lists every tool, runs the connection test, and finally meets the step-up challenge
// for a tool outside its scopes, which its transport answers by authorizing again.
import { runConnectionTest } from "./connection_check.ts";
import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { consent, oauthFixture, ownerBrowser } from "../blackbox/support/oauth_helpers.ts";
import { MemoryProvider2 as MemoryProvider } from "./memory_provider2.ts";

const modes = [
  { name: "pinned to 2026-07-28", mode: { pin: "2026-07-28" } },
  { name: "auto", mode: "auto" },
] as const;

for (const { name, mode } of modes) {
  Deno.test(`MCP SDK v2 client (${name}) with OAuth against the workspace endpoint`, async (t) => {
    const fx = await oauthFixture({ VESTIBULE_MCP_PAGE_SIZE: "20" });
    const { apiUrl, authUrl } = fx.server;
    const mcpUrl = new URL(`${apiUrl}/api/mcp`);
    const provider = new MemoryProvider("http://127.0.0.1:8977/callback");
    const seen: string[] = [];
    const registrations: Record<string, unknown>[] = [];
    const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.pathname.endsWith("/oauth2/register")) {
        registrations.push(JSON.parse(String(init?.body)));
      }
      const response = await fetch(input, init);
      const method = new Headers(init?.headers).get("mcp-method");
      seen.push(
        `${init?.method ?? "GET"} ${url.origin}${url.pathname}${
          method ? ` ${method}` : ""
        } ${response.status}`,
      );
      return response;
    };
    const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
    const newClient = () =>
      new Client({ name: "vestibule-interop", version: "2.0.0" }, {
        versionNegotiation: { mode },
      });
    let client = newClient();
    let transport = new StreamableHTTPClientTransport(mcpUrl, {
      authProvider: provider,
      fetch: recordingFetch,
    });

    /** The human opens the authorization URL and consents; the agent gets the callback back. */
    const authorizeAsHuman = async (url: URL) => {
      const location = await consent(human, fx, url.href);
      assert.equal(`${location.origin}${location.pathname}`, provider.redirectUrl);
      assert.equal(location.searchParams.get("state"), provider.states.at(-1));
      assert.equal(location.searchParams.get("iss"), `${authUrl}/api/auth`);
      assert.ok(location.searchParams.get("code"), `no code in ${location}`);
      return location.searchParams;
    };

    try {
      await t.step(
        "meets the 401 at server/discover, discovers, registers, sends the human",
        async () => {
          await assert.rejects(client.connect(transport), UnauthorizedError);
          assert.equal(seen[0], `POST ${apiUrl}/api/mcp server/discover 401`, seen.join("\n"));
          assert.ok(
            seen.includes(`GET ${apiUrl}/.well-known/oauth-protected-resource 200`),
            seen.join("\n"),
          );
          assert.ok(seen.includes(`POST ${authUrl}/api/auth/oauth2/register 201`), seen.join("\n"));
          // The v2 client names its kind (SEP-837): a loopback redirect makes it native.
          assert.equal(registrations[0]?.["application_type"], "native");
          const [url] = provider.authorizationUrls;
          assert.ok(url);
          assert.equal(`${url.origin}${url.pathname}`, `${authUrl}/api/auth/oauth2/authorize`);
          assert.equal(url.searchParams.get("scope"), "app.access");
          assert.equal(url.searchParams.get("resource"), apiUrl);
          assert.equal(url.searchParams.get("code_challenge_method"), "S256");
        },
      );

      await t.step("checks iss, exchanges the code and connects in 2026-07-28", async () => {
        await transport.finishAuth(await authorizeAsHuman(provider.authorizationUrls[0]!));
        assert.equal(provider.tokens()?.scope, "app.access");
        assert.equal(provider.tokens()?.refresh_token, undefined);
        assert.equal(provider.clientInformation()?.issuer, `${authUrl}/api/auth`);
        client = newClient();
        transport = new StreamableHTTPClientTransport(mcpUrl, {
          authProvider: provider,
          fetch: recordingFetch,
        });
        await client.connect(transport);
        assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
        assert.equal(client.getServerVersion()?.name, "127.0.0.1/workspace");
        assert.equal(client.getDiscoverResult()?.cacheScope, "private");
      });

      await t.step("lists every workspace tool across pages", async () => {
        const before = seen.length;
        const { tools, cacheScope } = await client.listTools();
        assert.equal(cacheScope, "private");
        const pages = seen.slice(before).filter((s) => s.endsWith(" tools/list 200")).length;
        assert.ok(pages >= 2, `one page only (${tools.length} tools)`);
        const names = tools.map((tool) => tool.name);
        assert.equal(new Set(names).size, names.length);
        for (const tool of tools) {
          assert.equal(typeof tool._meta?.["vestibule/scope"], "string", tool.name);
        }
        for (
          const tool of ["get_agent_connection_setup", "verify_agent_connection", "list_members"]
        ) {
          assert.ok(names.includes(tool), tool);
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
        assert.ok(seen.includes(`POST ${apiUrl}/api/mcp tools/call 403`), seen.join("\n"));
        assert.equal(provider.authorizationUrls.length, before + 1);
        const stepUp = provider.authorizationUrls.at(-1)!;
        // Everything granted plus the missing scope: re-authorizing loses nothing.
        assert.equal(stepUp.searchParams.get("scope"), "app.access members.read");
        assert.equal(stepUp.searchParams.get("resource"), apiUrl);
      });

      await t.step("after the human grants it, the same client may call the tool", async () => {
        const stale = provider.tokens()!.access_token;
        await transport.finishAuth(await authorizeAsHuman(provider.authorizationUrls.at(-1)!));
        assert.equal(provider.tokens()?.scope, "app.access members.read");
        const members = await client.callTool({ name: "list_members", arguments: {} });
        assert.notEqual(members.isError, true, JSON.stringify(members));
        const { members: list } = members.structuredContent as { members: { email: string }[] };
        assert.deepEqual(list.map((m) => m.email), ["owner@example.com"]);
        // The step-up widened the client's one grant: the earlier token is rotated out.
        assert.equal((await fx.verify(stale)).ok, false);
      });

      await t.step("no request of the session was an initialize", () => {
        assert.ok(seen.every((line) => !line.includes(" initialize ")), seen.join("\n"));
      });
    } finally {
      await client.close();
      await fx.close();
    }
  });
}
