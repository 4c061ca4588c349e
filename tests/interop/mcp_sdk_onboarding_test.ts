// Interop: the official MCP TypeScript SDK client (nobody here wrote it) against the running
// onboarding endpoint, in JSON and in SSE mode, listing across pages and calling every tool.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { startTestServer } from "../blackbox/support/harness.ts";

for (const mode of ["json", "sse"] as const) {
  Deno.test(`MCP SDK client against the onboarding endpoint (${mode})`, async (t) => {
    const server = await startTestServer({
      VESTIBULE_MCP_RESPONSE: mode,
      VESTIBULE_MCP_PAGE_SIZE: "2",
    });
    const client = new Client({ name: "vestibule-interop", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.authUrl}/mcp`));
    try {
      await t.step("connects: initialize, version negotiation, initialized", async () => {
        await client.connect(transport);
        assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
        assert.equal(client.getServerVersion()?.name, "127.0.0.1/onboarding");
        assert.match(client.getInstructions() ?? "", /get_connection_guide/);
        assert.equal(transport.sessionId, undefined, "stateless: no session");
        assert.equal(transport.protocolVersion, "2025-11-25");
      });

      await t.step("ping", async () => {
        assert.deepEqual(await client.ping(), {});
      });

      const names: string[] = [];
      await t.step("lists every tool across pages, each once", async () => {
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor });
          names.push(...page.tools.map((tool: { name: string }) => tool.name));
          cursor = page.nextCursor;
          pages++;
        } while (cursor !== undefined);
        assert.ok(pages >= 2, `expected several pages of 2, got ${pages}`);
        assert.equal(new Set(names).size, names.length);
        for (const name of ["get_connection_guide", "list_scopes", "describe_service"]) {
          assert.ok(names.includes(name), name);
        }
      });

      await t.step(
        "calls each onboarding tool; the SDK checks structuredContent against outputSchema",
        async () => {
          for (const name of ["get_connection_guide", "list_scopes", "describe_service"]) {
            const result = await client.callTool({ name, arguments: {} });
            assert.notEqual(result.isError, true, name);
            assert.equal(typeof result.structuredContent, "object", name);
            const [block] = result.content as { type: string; text: string }[];
            assert.equal(block?.type, "text", name);
          }
        },
      );

      await t.step(
        "progress notifications reach the SDK's onprogress, then the result",
        async () => {
          const seen: { progress: number; total?: number | undefined }[] = [];
          const result = await client.callTool(
            { name: "get_connection_guide", arguments: { checkDiscovery: true } },
            undefined,
            {
              onprogress: (p: { progress: number; total?: number }) =>
                seen.push({ progress: p.progress, total: p.total }),
            },
          );
          assert.deepEqual(seen.map((p) => p.progress), [0, 1, 2, 3]);
          const structured = result.structuredContent as { discovery: { checks: unknown[] } };
          assert.equal(structured.discovery.checks.length, 3);
        },
      );

      await t.step("invalid arguments come back as an isError result", async () => {
        const result = await client.callTool({
          name: "list_scopes",
          arguments: { unexpected: true },
        });
        assert.equal(result.isError, true);
        const [block] = result.content as { type: string; text: string }[];
        assert.match(block!.text, /"unexpected"/);
      });

      await t.step("an unknown tool is an MCP error -32602", async () => {
        await assert.rejects(
          client.callTool({ name: "no_such_tool", arguments: {} }),
          (error: { code?: number }) => error.code === -32602,
        );
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
}
