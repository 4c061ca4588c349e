// The revision each request negotiates at the endpoint: its version header, Mcp-Method, and
// the errors and fields of 2026-07-28 beside those of 2025-11-25.
import assert from "node:assert/strict";
import { HEADERS, PING, post, rpcError, setup } from "./endpoint_setup.ts";

/** A 2026-07-28 request: its version and capabilities in `_meta`, its method in a header. */
function modern(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): RequestInit {
  return post({
    jsonrpc: "2.0",
    id: "m1",
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  }, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, ...headers });
}

Deno.test("endpoint: each request is answered in the revision it negotiates", async (t) => {
  const send = setup();
  const cases: {
    name: string;
    init: RequestInit;
    status: number;
    id: string | number | null;
    code: number;
    message: RegExp;
  }[] = [
    {
      name: "an empty MCP-Protocol-Version",
      init: post(PING, { "MCP-Protocol-Version": "" }),
      status: 400,
      id: 1,
      code: -32022,
      message: /"" is not supported; supported versions: 2026-07-28, 2025-11-25, 2025-06-18/,
    },
    {
      name: "an unsupported MCP-Protocol-Version",
      init: post(PING, { "MCP-Protocol-Version": "2024-11-05" }),
      status: 400,
      id: 1,
      code: -32022,
      message: /"2024-11-05" is not supported; supported versions: 2026-07-28, 2025-11-25/,
    },
    {
      name: "a 2026-07-28 request without Mcp-Method",
      init: modern("tools/list", {}, { "Mcp-Method": "" }),
      status: 400,
      id: "m1",
      code: -32020,
      message: /Mcp-Method "" does not match the method "tools\/list"/,
    },
    {
      name: "a 2026-07-28 request for a method it does not have",
      init: modern("ping"),
      status: 404,
      id: "m1",
      code: -32601,
      message: /"ping" is not part of MCP 2026-07-28/,
    },
    {
      name: "a 2026-07-28 request for an unknown method",
      init: modern("prompts/list"),
      status: 404,
      id: "m1",
      code: -32601,
      message: /Method not found: "prompts\/list"/,
    },
    {
      name: "a 2025-11-25 request for an unknown method",
      init: post({ jsonrpc: "2.0", id: 7, method: "prompts/list" }),
      status: 200,
      id: 7,
      code: -32601,
      message: /Method not found: "prompts\/list"/,
    },
  ];
  for (const c of cases) {
    await t.step(`${c.name} -> ${c.status} ${c.code}, with the request's id`, async () => {
      const response = await send(c.init);
      assert.equal(response.status, c.status);
      const body = await rpcError(response);
      assert.equal(body.id, c.id);
      assert.equal(body.error.code, c.code);
      assert.match(body.error.message, c.message);
    });
  }

  await t.step(
    "a header-less request is the revision's HeaderMismatch, naming versions",
    async () => {
      const headers = new Headers(HEADERS);
      headers.delete("MCP-Protocol-Version");
      const response = await send({ method: "POST", headers, body: JSON.stringify(PING) });
      assert.equal(response.status, 400);
      const body = await rpcError(response);
      assert.deepEqual([body.id, body.error.code], [1, -32020]);
      assert.match(body.error.message, /header is missing; supported versions: 2026-07-28/);
    },
  );

  await t.step(
    "UnsupportedProtocolVersion lists every version and echoes the asked one",
    async () => {
      const body = await (await send(post(PING, { "MCP-Protocol-Version": "1999-01-01" }))).json();
      assert.deepEqual(body.error.data, {
        supported: ["2026-07-28", "2025-11-25", "2025-06-18"],
        requested: "1999-01-01",
      });
    },
  );

  await t.step("a 2026-07-28 tools/list is answered with the revision's fields", async () => {
    const response = await send(modern("tools/list"));
    assert.equal(response.status, 200);
    const { result } = await response.json();
    assert.equal(result.resultType, "complete");
    assert.equal(result.cacheScope, "public");
    assert.equal(result.ttlMs, 300_000);
    assert.deepEqual(result._meta, {
      "io.modelcontextprotocol/serverInfo": { name: "t", title: "T", version: "1" },
    });
  });

  await t.step("configured SSE still answers a 2026-07-28 404 as JSON", async () => {
    const response = await setup({ sse: true })(modern("ping"));
    assert.equal(response.status, 404);
    await rpcError(response);
  });

  await t.step("a 2026-07-28 notification is 202 without Mcp-Method", async () => {
    const response = await send(post(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
      { "MCP-Protocol-Version": "2026-07-28" },
    ));
    assert.equal(response.status, 202);
  });
});
