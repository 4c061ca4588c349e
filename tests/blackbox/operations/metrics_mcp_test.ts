// MCP requests by endpoint, method and tool, and JSON-RPC errors by code, move with real
// traffic on both endpoints; a client's method and tool names never become labels.
import assert from "node:assert/strict";
import { INITIALIZE, mcpPost } from "../support/mcp_helpers.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test("metrics: MCP requests by endpoint, method and tool; JSON-RPC errors by code", async () => {
  const ws = await startWorkspaceServer(adminEnv());
  const onboarding = `${ws.server.authUrl}/mcp`;
  const send = async (url: string, body: unknown, headers?: Record<string, string>) =>
    await (await mcpPost(url, body, headers)).body?.cancel();
  const call = (id: number, name: string, args = {}) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
  try {
    await send(onboarding, INITIALIZE);
    await send(onboarding, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    await send(onboarding, call(2, "list_scopes"));
    await send(onboarding, call(3, "list_scopes"));
    await send(onboarding, call(4, "no_such_tool_a")); // -32602
    await send(onboarding, call(5, "no_such_tool_b")); // -32602
    await send(onboarding, { jsonrpc: "2.0", id: 6, method: "made/up" }); // -32601
    await send(onboarding, "{not json"); // -32700
    await send(onboarding, INITIALIZE, { Accept: "application/json" }); // 406, -32000
    await (await fetch(onboarding)).body?.cancel(); // 405, -32000
    await send(onboarding, { jsonrpc: "2.0", method: "notifications/initialized" }); // no id

    const { token } = await ws.token(["app.access"]);
    const auth = { Authorization: `Bearer ${token}`, "MCP-Protocol-Version": "2025-06-18" };
    await send(`${ws.server.apiUrl}/api/mcp`, call(1, "get_agent_connection_setup"), auth);

    const text = await scrape(ws.server.adminUrl);
    const requests = (labels: string) => sample(text, `vestibule_mcp_requests_total{${labels}}`);
    const errors = (labels: string) => sample(text, `vestibule_mcp_errors_total{${labels}}`);
    assert.equal(requests('endpoint="onboarding",method="initialize"'), 1);
    assert.equal(requests('endpoint="onboarding",method="tools/list"'), 1);
    assert.equal(requests('endpoint="onboarding",method="tools/call",tool="list_scopes"'), 2);
    assert.equal(requests('endpoint="onboarding",method="tools/call",tool="other"'), 2);
    assert.equal(requests('endpoint="onboarding",method="other"'), 1);
    assert.equal(
      requests('endpoint="workspace",method="tools/call",tool="get_agent_connection_setup"'),
      1,
    );
    assert.equal(errors('endpoint="onboarding",code="-32602"'), 2);
    assert.equal(errors('endpoint="onboarding",code="-32601"'), 1);
    assert.equal(errors('endpoint="onboarding",code="-32700"'), 1);
    assert.equal(errors('endpoint="onboarding",code="-32000"'), 2);
    assert.equal(errors('endpoint="workspace",code="-32602"'), undefined);
    for (const chosen of ["no_such_tool", "made/up", "notifications/initialized"]) {
      assert.ok(!text.includes(chosen), `${chosen} is not a label`);
    }
  } finally {
    await ws.close();
  }
});
