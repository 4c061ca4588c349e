// The transport without a socket: the rules of the Streamable HTTP endpoint, in-process (the
// revision each request negotiates: endpoint_revisions_test.ts).
import assert from "node:assert/strict";
import { createRateLimiter } from "../../src/http/rate_limiter.ts";
import type { McpMetrics } from "../../src/mcp/transport.ts";
import { defineTool } from "../../src/mcp/tool.ts";
import * as v from "valibot";
import { progressTool } from "./fixtures.ts";
import { parseSse } from "./wire.ts";
import { HEADERS, PING, post, rpcError, setup } from "./endpoint_setup.ts";

Deno.test("endpoint: transport errors carry a JSON-RPC body", async (t) => {
  const send = setup();
  const cases: { name: string; init: RequestInit; status: number; message: RegExp }[] = [
    { name: "GET", init: { method: "GET" }, status: 405, message: /use POST/ },
    { name: "DELETE", init: { method: "DELETE" }, status: 405, message: /use POST/ },
    {
      name: "a text/plain body",
      init: post(PING, { "Content-Type": "text/plain" }),
      status: 415,
      message: /Content-Type must be application\/json/,
    },
    {
      name: "no Content-Type",
      init: {
        method: "POST",
        headers: { Accept: HEADERS.Accept },
        body: new Blob([JSON.stringify(PING)]),
      },
      status: 415,
      message: /Content-Type/,
    },
    {
      name: "Accept without text/event-stream",
      init: post(PING, { Accept: "application/json" }),
      status: 406,
      message: /both application\/json and text\/event-stream/,
    },
    {
      name: "Accept */*",
      init: post(PING, { Accept: "*/*" }),
      status: 406,
      message: /Accept/,
    },
    {
      name: "an untrusted Origin",
      init: post(PING, { Origin: "https://evil.example" }),
      status: 403,
      message: /origin "https:\/\/evil.example" is not trusted/,
    },
    {
      name: "a body over the cap",
      init: post({ ...PING, pad: "x".repeat(2000) }),
      status: 413,
      message: /exceeds 1024 bytes/,
    },
    { name: "invalid JSON", init: post("{nope"), status: 400, message: /Parse error/ },
    { name: "a batch", init: post([PING]), status: 400, message: /batches are not supported/ },
  ];
  for (const c of cases) {
    await t.step(`${c.name} -> ${c.status}`, async () => {
      const response = await send(c.init);
      assert.equal(response.status, c.status);
      const body = await rpcError(response);
      assert.equal(body.id, null);
      assert.match(body.error.message, c.message);
      if (c.status === 405) assert.equal(response.headers.get("Allow"), "POST, OPTIONS");
      if (c.status === 413) assert.equal(response.headers.get("Connection"), "close");
    });
  }

  await t.step("the parse error code is -32700 and the batch code -32600", async () => {
    assert.equal((await (await send(post("{"))).json()).error.code, -32700);
    assert.equal((await (await send(post([PING]))).json()).error.code, -32600);
  });
});

Deno.test("endpoint: the cap holds for a streamed body without Content-Length", async () => {
  const send = setup({ maxBodyBytes: 100 });
  let pulled = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new TextEncoder().encode("x".repeat(40)));
    },
    cancel() {
      cancelled = true;
    },
  });
  const response = await send({ method: "POST", headers: HEADERS, body });
  assert.equal(response.status, 413);
  assert.match((await response.json()).error.message, /exceeds 100 bytes/);
  assert.ok(cancelled, "the rest of the body is cancelled");
  assert.ok(pulled <= 4, `read ${pulled} chunks of 40 bytes past a 100-byte cap`);
});

Deno.test("endpoint: messages", async (t) => {
  const send = setup();
  await t.step("initialize needs no version header", async () => {
    const headers = new Headers(HEADERS);
    headers.delete("MCP-Protocol-Version");
    const response = await send({
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "a", version: "1" },
        },
      }),
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Content-Type"), "application/json");
    assert.equal(response.headers.get("Mcp-Session-Id"), null);
    assert.equal((await response.json()).result.protocolVersion, "2025-06-18");
  });

  await t.step("a notification is 202 with an empty body", async () => {
    const response = await send(post({ jsonrpc: "2.0", method: "notifications/initialized" }));
    assert.equal(response.status, 202);
    assert.equal(await response.text(), "");
  });

  await t.step("a notification still needs the version header", async () => {
    const response = await send(
      post({ jsonrpc: "2.0", method: "notifications/initialized" }, {
        "MCP-Protocol-Version": "x",
      }),
    );
    assert.equal(response.status, 400);
  });

  await t.step("a client's response is acknowledged with 202", async () => {
    const response = await send(post({ jsonrpc: "2.0", id: 3, result: {} }));
    assert.equal(response.status, 202);
  });

  await t.step("a JSON-RPC error from dispatch travels with 200", async () => {
    const response = await send(post({ jsonrpc: "2.0", id: 2, method: "nope" }));
    assert.equal(response.status, 200);
    assert.equal((await response.json()).error.code, -32601);
  });

  await t.step("Content-Type with a charset and Accept with parameters are fine", async () => {
    const response = await send(post(PING, {
      "Content-Type": "application/json; charset=utf-8",
      "Accept": "application/json;q=0.9, text/event-stream;q=0.8",
    }));
    assert.equal(response.status, 200);
  });
});

Deno.test("endpoint: origins and CORS", async (t) => {
  const send = setup();
  await t.step("a trusted Origin gets CORS headers exposing what clients read", async () => {
    const response = await send(post(PING, { Origin: "https://app.example.com" }));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Access-Control-Allow-Origin"), "https://app.example.com");
    assert.match(response.headers.get("Access-Control-Expose-Headers")!, /MCP-Protocol-Version/);
    assert.match(response.headers.get("Access-Control-Expose-Headers")!, /Retry-After/);
    await response.body?.cancel();
  });

  await t.step("no Origin (a non-browser client) is fine and gets no CORS headers", async () => {
    const response = await send(post(PING));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Access-Control-Allow-Origin"), null);
    await response.body?.cancel();
  });

  await t.step("a preflight from a trusted origin is answered", async () => {
    const response = await send({
      method: "OPTIONS",
      headers: {
        Origin: "https://app.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, mcp-protocol-version",
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("Access-Control-Allow-Origin"), "https://app.example.com");
    assert.equal(response.headers.get("Access-Control-Allow-Methods"), "POST");
    assert.match(response.headers.get("Access-Control-Allow-Headers")!, /MCP-Protocol-Version/);
    assert.match(response.headers.get("Access-Control-Allow-Headers")!, /Mcp-Method, Mcp-Name/);
    assert.match(response.headers.get("Access-Control-Allow-Headers")!, /Authorization/);
  });

  await t.step("a preflight from another origin is 403 without CORS headers", async () => {
    const response = await send({
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    assert.equal(response.status, 403);
    assert.equal(response.headers.get("Access-Control-Allow-Origin"), null);
    await rpcError(response);
  });
});

Deno.test("endpoint: rate limit answers 429 with Retry-After and a JSON-RPC body", async () => {
  let now = 0;
  const limiter = createRateLimiter({ perMinute: 60, burst: 2, now: () => now });
  const send = setup({ rateLimiter: limiter });
  assert.equal((await send(post(PING))).status, 200);
  assert.equal((await send(post(PING))).status, 200);
  const limited = await send(post(PING));
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("Retry-After"), "1");
  assert.match((await rpcError(limited)).error.message, /retry after 1 second$/);
  now += 1000;
  assert.equal((await send(post(PING))).status, 200);
});

Deno.test("endpoint: SSE", async (t) => {
  await t.step("a progress call streams progress then the result", async () => {
    const send = setup();
    const response = await send(post({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "count_up", arguments: { steps: 3 }, _meta: { progressToken: 7 } },
    }));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Content-Type"), "text/event-stream");
    assert.equal(response.headers.get("X-Accel-Buffering"), "no");
    const messages = parseSse(await response.text());
    assert.deepEqual(messages.map((m) => m.method ?? `result ${m.id}`), [
      "notifications/progress",
      "notifications/progress",
      "notifications/progress",
      "result 4",
    ]);
    assert.deepEqual(messages.slice(0, 3).map((m) => m.params.progress), [1, 2, 3]);
  });

  await t.step("configured SSE answers every request as an event stream", async () => {
    const send = setup({ sse: true });
    const response = await send(post(PING));
    assert.equal(response.headers.get("Content-Type"), "text/event-stream");
    assert.deepEqual(parseSse(await response.text()), [{ jsonrpc: "2.0", id: 1, result: {} }]);
  });

  await t.step("configured SSE leaves transport errors as JSON", async () => {
    const send = setup({ sse: true });
    const response = await send(post("{"));
    assert.equal(response.status, 400);
    await rpcError(response);
  });
});

Deno.test("endpoint: a refusal of mayCall answers in place of the call", async () => {
  const send = setup({ refuse: true });
  const refused = await send(post({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "echo", arguments: { text: "a", count: 1 } },
  }));
  assert.equal(refused.status, 403);
  assert.equal(await refused.text(), "step up");
  const allowed = await send(post({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "count_up", arguments: { steps: 0 } },
  }));
  assert.equal(allowed.status, 200);
  await allowed.body?.cancel();
});

Deno.test("endpoint: metrics count requests by bounded method and tool, errors by code, streamed ones too", async () => {
  const requests: [string, string | undefined][] = [];
  const errors: number[] = [];
  const metrics: McpMetrics = {
    request: (method, tool) => requests.push([method, tool]),
    error: (code) => errors.push(code),
  };
  const fallsOver = defineTool<string, Record<string, never>, { done: number }>({
    ...progressTool,
    name: "falls_over",
    input: v.strictObject({}),
    async handler(_args, context) {
      await context.progress(1, 2, "half way");
      throw new Error("unexpected");
    },
  });
  const send = setup({ metrics, tools: [progressTool, fallsOver] });
  const call = (name: string, meta = {}) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: name === "count_up" ? { steps: 1 } : {}, _meta: meta },
  });
  for (
    const init of [
      post(PING),
      post(call("count_up")),
      post(call("whatever")),
      post({ jsonrpc: "2.0", id: 2, method: "no/such" }),
      post(call("falls_over", { progressToken: 1 })),
      post("["),
      post(PING, { "Content-Type": "text/plain" }),
      { method: "PUT", headers: HEADERS, body: "{}" },
      post(PING, { Origin: "https://evil.example" }),
      post({ jsonrpc: "2.0", method: "notifications/initialized" }),
    ]
  ) {
    await (await send(init)).text();
  }
  assert.deepEqual(requests, [
    ["ping", undefined],
    ["tools/call", "count_up"],
    ["tools/call", "other"],
    ["other", undefined],
    ["tools/call", "falls_over"],
  ]);
  // -32602 unknown tool, -32601 unknown method, -32603 the streamed failure, -32700 the bad
  // body; the media type, the method and the origin are transport errors.
  assert.deepEqual(errors, [-32602, -32601, -32603, -32700, -32000, -32000, -32000]);
});
