// The headers of the upstreams file on the wire, through the gateway's own HTTP client: sent as
// fetch would send them, and never in place of the transport's own.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { createHttp1Fetch } from "../../src/gateway/http1.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";

const OPERATOR_HEADERS = {
  "X-Team": " blue ",
  "x-team": "green",
  "Content-Type": "text/plain",
  "MCP-Protocol-Version": "1999-01-01",
  "Mcp-Session-Id": "forged",
  "Mcp-Method": "forged",
  "Authorization": "Bearer op3rator",
};

/** Calls `echo` on an upstream of `era`, and gives the headers its tools/call came with. */
async function callHeaders(era: "2025-06-18" | "2026-07-28"): Promise<Headers> {
  const calls: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 200 });
    const body = await request.json();
    const reply = (result: Record<string, unknown>, headers: Record<string, string> = {}) =>
      Response.json({ jsonrpc: "2.0", id: body.id, result }, { headers });
    if (body.method === "server/discover") {
      return era === "2026-07-28"
        ? reply({
          resultType: "complete",
          supportedVersions: [era],
          capabilities: { tools: {} },
          ttlMs: 0,
          cacheScope: "public",
        })
        : Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "no" } }, {
          status: 404,
        });
    }
    if (body.method === "initialize") {
      return reply({
        protocolVersion: era,
        capabilities: { tools: {} },
        serverInfo: { name: "plain", version: "0" },
      }, { "Mcp-Session-Id": "session-1" });
    }
    if (body.id === undefined) return new Response(null, { status: 202 });
    if (body.method === "tools/call") calls.push(request.headers);
    return reply({ resultType: "complete", content: [] });
  });
  const fetch1 = createHttp1Fetch();
  const client = createMcpClient(
    upstreamConfig({
      kind: "http",
      url: `http://127.0.0.1:${server.addr.port}/mcp`,
      headers: OPERATOR_HEADERS,
    }, { name: "plain", title: "Plain" }),
    { log: () => {}, fetch: fetch1 },
  );
  try {
    await client.callTool("echo", {});
    assert.equal(calls.length, 1);
    return calls[0]!;
  } finally {
    await client.close();
    fetch1.close();
    await server.shutdown();
  }
}

Deno.test("the operator's headers go with each call, one value per name", async () => {
  for (const era of ["2025-06-18", "2026-07-28"] as const) {
    const headers = await callHeaders(era);
    assert.equal(headers.get("X-Team"), "blue, green", era);
    assert.equal(headers.get("Authorization"), "Bearer op3rator", era);
    assert.equal(headers.get("Content-Type"), "application/json", era);
    assert.equal(headers.get("MCP-Protocol-Version"), era);
  }
});

Deno.test("the operator's headers never stand in for the protocol's own", async () => {
  const legacy = await callHeaders("2025-06-18");
  assert.equal(legacy.get("Mcp-Session-Id"), "session-1");
  assert.equal(legacy.get("Mcp-Method"), null);
  // Stateless: no session id at all, and the method the call's own.
  const modern = await callHeaders("2026-07-28");
  assert.equal(modern.get("Mcp-Session-Id"), null);
  assert.equal(modern.get("Mcp-Method"), "tools/call");
  assert.equal(modern.get("Mcp-Name"), "echo");
});
