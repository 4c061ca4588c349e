// Interop: the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client, nobody here
// wrote it) against the running onboarding endpoint in MCP 2026-07-28: pinned to the revision
// and in `auto` mode (discover, then stay modern), JSON and SSE answers, every page, every
// read tool, progress, the response cache the caching hints allow; and, at the same time on
// the same endpoint, the v1 client speaking 2025-11-25.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { startTestServer } from "../blackbox/support/harness.ts";

const READ_TOOLS = ["get_connection_guide", "list_scopes", "describe_service"];

/** A fetch that records `METHOD Mcp-Method status` of every exchange. */
function recordingFetch(seen: string[]) {
  return async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    seen.push(`${init?.method ?? "GET"} ${headers.get("mcp-method") ?? "-"} ${response.status}`);
    return response;
  };
}

const modes = [
  { name: "pinned to 2026-07-28", mode: { pin: "2026-07-28" } },
  { name: "auto", mode: "auto" },
] as const;

for (const answers of ["json", "sse"] as const) {
  for (const { name, mode } of modes) {
    Deno.test(`MCP SDK v2 client (${name}) against the onboarding endpoint (${answers})`, async (t) => {
      const server = await startTestServer({
        VESTIBULE_MCP_RESPONSE: answers,
        VESTIBULE_MCP_PAGE_SIZE: "2",
      });
      const seen: string[] = [];
      const client = new Client({ name: "vestibule-interop", version: "2.0.0" }, {
        versionNegotiation: { mode },
      });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.authUrl}/mcp`), {
        fetch: recordingFetch(seen),
      });
      try {
        await t.step("connects by server/discover, without initialize", async () => {
          await client.connect(transport);
          assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
          assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
          assert.equal(client.getServerVersion()?.name, "127.0.0.1/onboarding");
          assert.match(client.getInstructions() ?? "", /get_connection_guide/);
          assert.deepEqual(client.getDiscoverResult()?.supportedVersions, [
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
          ]);
          assert.deepEqual(seen, ["POST server/discover 200"]);
        });

        let names: string[] = [];
        await t.step("lists every tool: the SDK walks each 2026-07-28 page", async () => {
          const all = await client.listTools();
          names = all.tools.map((tool) => tool.name);
          assert.equal(all.cacheScope, "public");
          assert.equal(all.ttlMs, 300_000);
          const pages = seen.filter((line) => line === "POST tools/list 200").length;
          assert.equal(pages, Math.ceil(names.length / 2), seen.join("\n"));
          assert.ok(pages >= 2, `expected several pages of 2, got ${pages}`);
          assert.equal(new Set(names).size, names.length);
          for (const tool of READ_TOOLS) assert.ok(names.includes(tool), tool);
        });

        await t.step("while ttlMs lasts, the list comes from its cache", async () => {
          const before = seen.length;
          const again = await client.listTools();
          assert.deepEqual(again.tools.map((tool) => tool.name), names);
          assert.equal(seen.length, before, "no round trip");
        });

        await t.step("calls each read tool; the SDK checks structuredContent", async () => {
          for (const tool of READ_TOOLS) {
            const result = await client.callTool({ name: tool, arguments: {} });
            assert.notEqual(result.isError, true, tool);
            assert.equal(typeof result.structuredContent, "object", tool);
            assert.equal((result.content as { type: string }[])[0]?.type, "text", tool);
          }
          assert.ok(seen.includes("POST tools/call 200"), seen.join("\n"));
        });

        await t.step("progress notifications reach onprogress, then the result", async () => {
          const progress: number[] = [];
          const result = await client.callTool(
            { name: "get_connection_guide", arguments: { checkDiscovery: true } },
            { onprogress: (p: { progress: number }) => progress.push(p.progress) },
          );
          assert.deepEqual(progress, [0, 1, 2, 3]);
          const structured = result.structuredContent as { discovery: { checks: unknown[] } };
          assert.equal(structured.discovery.checks.length, 3);
        });

        await t.step("invalid arguments come back as an isError result", async () => {
          const result = await client.callTool({ name: "list_scopes", arguments: { extra: 1 } });
          assert.equal(result.isError, true);
          assert.match((result.content as { text: string }[])[0]!.text, /"extra"/);
        });

        await t.step("an unknown tool is an MCP error -32602", async () => {
          await assert.rejects(
            client.callTool({ name: "no_such_tool", arguments: {} }),
            (error: { code?: number }) => error.code === -32602,
          );
        });

        await t.step("no request of the session was an initialize or a ping", () => {
          assert.ok(seen.every((line) => !/initialize|ping/.test(line)), seen.join("\n"));
        });
      } finally {
        await client.close();
        await server.close();
      }
    });
  }
}

Deno.test("the SDK v1 client (2025-11-25) and v2 client (2026-07-28) on one endpoint at once", async () => {
  const server = await startTestServer({ VESTIBULE_MCP_PAGE_SIZE: "2" });
  const url = new URL(`${server.authUrl}/mcp`);
  const v1 = new ClientV1({ name: "v1", version: "1.0.0" });
  const v2 = new Client({ name: "v2", version: "2.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  const v1Transport = new TransportV1(url);
  try {
    await Promise.all([
      v1.connect(v1Transport),
      v2.connect(new StreamableHTTPClientTransport(url)),
    ]);
    assert.equal(v1Transport.protocolVersion, "2025-11-25");
    assert.equal(v2.getNegotiatedProtocolVersion(), "2026-07-28");
    const listV1 = async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await v1.listTools(cursor === undefined ? {} : { cursor });
        assert.equal("resultType" in page, false, "a 2025 page");
        names.push(...page.tools.map((tool: { name: string }) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return names;
    };
    const rounds = await Promise.all(
      Array.from(
        { length: 4 },
        (_, i) =>
          i % 2 === 0
            ? listV1()
            : v2.listTools({}, { cacheMode: "bypass" }).then((r) => r.tools.map((t) => t.name)),
      ),
    );
    for (const names of rounds) assert.deepEqual(names, rounds[0]);
    const [a, b] = await Promise.all([
      v1.callTool({ name: "list_scopes", arguments: {} }),
      v2.callTool({ name: "list_scopes", arguments: {} }),
    ]);
    assert.deepEqual(a.structuredContent, b.structuredContent);
  } finally {
    await v1.close();
    await v2.close();
    await server.close();
  }
});
