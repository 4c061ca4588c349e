// The upstream client against small HTTP upstreams written here to misbehave (or to speak
// 2026-07-28): size cap, broken JSON, bad tool definitions, pages in a circle, a request from
// the server, a call that never ends.
import assert from "node:assert/strict";
import { createMcpClient, createRequestIds } from "../../src/gateway/client.ts";
import { UpstreamError } from "../../src/gateway/mcp_client.ts";
import type { UpstreamConfig } from "../../src/config/upstreams.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";

interface Seen {
  readonly method: string;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

type Answer = Response | Record<string, unknown>;

/** A legacy server that answers the handshake itself and `tools` everything else. */
function serve(tools: (body: Record<string, unknown>, seen: Seen[]) => Answer | Promise<Answer>) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (request.method === "DELETE") {
      seen.push({ method: "DELETE", headers: request.headers, body: {} });
      return new Response(null, { status: 200 });
    }
    const body = await request.json();
    seen.push({ method: body.method ?? "(response)", headers: request.headers, body });
    const reply = (result: Record<string, unknown>, headers: Record<string, string> = {}) =>
      Response.json({ jsonrpc: "2.0", id: body.id, result }, { headers });
    if (body.method === "server/discover") {
      return Response.json({
        jsonrpc: "2.0",
        id: body.id,
        error: { code: -32601, message: "Method not found" },
      }, { status: 404 });
    }
    if (body.method === "initialize") {
      return reply({
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "hostile", version: "0" },
      }, { "Mcp-Session-Id": "session-1" });
    }
    if (body.id === undefined || body.method === undefined) {
      return new Response(null, { status: 202 });
    }
    const answer = await tools(body, seen);
    return answer instanceof Response ? answer : reply(answer);
  });
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  return { seen, url, server };
}

function config(url: string, overrides: Partial<UpstreamConfig> = {}): UpstreamConfig {
  return upstreamConfig({
    kind: "http",
    url,
    headers: { Authorization: "Bearer op3rator-s3cret" },
  }, { name: "hostile", title: "Hostile", ...overrides });
}

const tool = (name: string, inputSchema: unknown = { type: "object" }) => ({ name, inputSchema });

Deno.test("an answer past the size cap is a too_large error naming the cap", async () => {
  const { url, server } = serve(() =>
    new Response(
      `{"jsonrpc":"2.0","id":3,"result":{"content":[],"pad":"${"x".repeat(10 << 20)}"}}`,
      {
        headers: { "Content-Type": "application/json" },
      },
    )
  );
  const client = createMcpClient(config(url, { maxResponseBytes: 65_536 }), { log: () => {} });
  try {
    await assert.rejects(client.callTool("big", {}), (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "too_large");
      assert.equal(
        error.message,
        "Hostile answered with more than 65536 bytes, the most this upstream may send",
      );
      return true;
    });
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("an event stream past the size cap is cut off while it is read", async () => {
  const { url, server } = serve((body) => {
    const chunk = new TextEncoder().encode(`: ${"x".repeat(16_000)}\n\n`);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // An endless stream: only the cap ends it.
        if (sent++ > 10_000) controller.close();
        else controller.enqueue(chunk);
      },
    });
    void body;
    return new Response(stream, { headers: { "Content-Type": "text/event-stream" } });
  });
  const client = createMcpClient(config(url, { maxResponseBytes: 65_536 }), { log: () => {} });
  try {
    await assert.rejects(
      client.callTool("stream", {}),
      (error) => error instanceof UpstreamError && error.kind === "too_large",
    );
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("an answer that is not JSON is a protocol error in plain words", async () => {
  const { url, server } = serve(() =>
    new Response("{not json", { headers: { "Content-Type": "application/json" } })
  );
  const client = createMcpClient(config(url), { log: () => {} });
  try {
    await assert.rejects(client.callTool("any", {}), (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "protocol");
      assert.equal(
        error.message,
        "Hostile answered tools/call with a message that is not valid JSON",
      );
      return true;
    });
    assert.equal(client.version, "2025-06-18");
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("a tool with an unusable definition is left out and logged, the others kept", async () => {
  const { url, server } = serve(() => ({
    tools: [
      tool("good"),
      tool("string-input", { type: "string" }),
      { ...tool("array-output"), outputSchema: [] },
      { inputSchema: { type: "object" } },
    ],
  }));
  const lines: string[] = [];
  const client = createMcpClient(config(url), { log: (line) => lines.push(line) });
  try {
    const tools = await client.listTools();
    assert.deepEqual(tools.map((each) => each.name), ["good"]);
    const left = lines.map((line) => JSON.parse(line)).filter((line) =>
      line.message === "upstream tool left out"
    );
    assert.deepEqual(left.map((line) => [line.upstream, line.tool]), [
      ["hostile", "string-input"],
      ["hostile", "array-output"],
      ["hostile", null],
    ]);
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("tools/list follows three pages, and a cursor seen before ends the walk", async () => {
  const pages = (loop: boolean) => (body: Record<string, unknown>) => {
    const cursor = (body.params as { cursor?: string } | undefined)?.cursor;
    if (cursor === undefined) return { tools: [tool("a")], nextCursor: "p2" };
    if (cursor === "p2") return { tools: [tool("b")], nextCursor: "p3" };
    return loop ? { tools: [tool("c")], nextCursor: "p2" } : { tools: [tool("c")] };
  };
  for (const loop of [false, true]) {
    const { url, server } = serve(pages(loop));
    const client = createMcpClient(config(url), { log: () => {} });
    try {
      if (!loop) {
        assert.deepEqual((await client.listTools()).map((each) => each.name), ["a", "b", "c"]);
      } else {
        await assert.rejects(
          client.listTools(),
          (error) =>
            error instanceof UpstreamError && error.kind === "protocol" &&
            error.message ===
              "Hostile repeated a tools/list cursor; its pages go round in a circle",
        );
      }
    } finally {
      await client.close();
      await server.shutdown();
    }
  }
});

Deno.test("a request from the upstream inside its stream gets -32601 posted back", async () => {
  let answered: (body: Record<string, unknown>) => void = () => {};
  const reply = new Promise<Record<string, unknown>>((resolve) => answered = resolve);
  const { url, server, seen } = serve((body) => {
    if (body.method !== "tools/call") return { tools: [] };
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const ask = { jsonrpc: "2.0", id: "s1", method: "sampling/createMessage", params: {} };
        controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(ask)}\n\n`));
        const error = await reply;
        const result = { content: [{ type: "text", text: JSON.stringify(error) }] };
        const done = { jsonrpc: "2.0", id: body.id, result };
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(done)}\n\n`));
        controller.close();
      },
    });
    return new Response(stream, { headers: { "Content-Type": "text/event-stream" } });
  });
  const watch = setInterval(() => {
    const back = seen.find((each) => each.body.id === "s1");
    if (back !== undefined) answered(back.body);
  }, 10);
  const client = createMcpClient(config(url), { log: () => {} });
  try {
    const result = await client.callTool("ask", {});
    const error = JSON.parse((result.content[0] as { text: string }).text);
    assert.equal(error.error.code, -32601);
    assert.equal(
      error.error.message,
      "The gateway does not support sampling/createMessage requests from an upstream server",
    );
    const back = seen.find((each) => each.body.id === "s1")!;
    assert.equal(back.headers.get("Mcp-Session-Id"), "session-1");
  } finally {
    clearInterval(watch);
    await client.close();
    await server.shutdown();
  }
});

Deno.test("an error with a null id answers a call only with an HTTP error status", async () => {
  const orphan = { jsonrpc: "2.0", id: null, error: { code: -32603, message: "someone's data" } };
  const { url, server } = serve((body) => {
    if (body.method !== "tools/call") return { tools: [] };
    const args = (body.params as { arguments: { as: string } }).arguments;
    return args.as === "json"
      ? Response.json(orphan)
      : new Response(`data: ${JSON.stringify(orphan)}\n\n`, {
        headers: { "Content-Type": "text/event-stream" },
      });
  });
  const client = createMcpClient(config(url), { log: () => {} });
  try {
    for (const as of ["json", "sse"]) {
      await assert.rejects(client.callTool("x", { as }), (error) => {
        assert.ok(error instanceof UpstreamError);
        assert.equal(error.kind, "protocol");
        assert.equal(
          error.message,
          "Hostile answered tools/call with an error that names no request",
        );
        return true;
      });
    }
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("clients that share an id source never send the same request id", async () => {
  const { url, server, seen } = serve(() => ({ content: [] }));
  const ids = createRequestIds();
  const first = createMcpClient(config(url), { log: () => {}, ids });
  const second = createMcpClient(config(url), { log: () => {}, ids });
  try {
    await first.callTool("x", {});
    await second.callTool("x", {});
    const sent = seen.map((each) => each.body.id).filter((id) => id !== undefined);
    assert.equal(sent.length, 6);
    assert.equal(new Set(sent).size, sent.length);
  } finally {
    await first.close();
    await second.close();
    await server.shutdown();
  }
});

Deno.test("a call past the upstream's time is a timeout, and the session is told", async () => {
  let release: () => void = () => {};
  const hang = new Promise<void>((resolve) => release = resolve);
  const { url, server, seen } = serve(async () => {
    await hang;
    return { content: [] };
  });
  const lines: string[] = [];
  const client = createMcpClient(config(url, { timeoutMs: 300 }), {
    log: (line) => lines.push(line),
  });
  try {
    await assert.rejects(client.callTool("slow", {}), (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "timeout");
      assert.equal(error.message, "Hostile did not answer within 300 ms");
      return true;
    });
    for (
      let i = 0;
      i < 100 && !seen.some((each) => each.method === "notifications/cancelled");
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const cancelled = seen.find((each) => each.method === "notifications/cancelled")!;
    const call = seen.find((each) => each.method === "tools/call")!;
    assert.deepEqual(cancelled.body.params, {
      requestId: call.body.id,
      reason: "Hostile did not answer within 300 ms",
    });
    assert.equal(cancelled.headers.get("Mcp-Session-Id"), "session-1");
    assert.equal(call.headers.get("MCP-Protocol-Version"), "2025-06-18");
    assert.equal(call.headers.get("Authorization"), "Bearer op3rator-s3cret");
    assert.ok(!lines.some((line) => line.includes("op3rator-s3cret")));
    await client.close();
    assert.equal(seen.at(-1)?.method, "DELETE");
    assert.equal(seen.at(-1)?.headers.get("Mcp-Session-Id"), "session-1");
  } finally {
    release();
    await client.close();
    await server.shutdown();
  }
});

Deno.test("a 2026-07-28 upstream is spoken to statelessly, without initialize", async () => {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const body = await request.json();
    seen.push({ method: body.method, headers: request.headers, body });
    const reply = (result: Record<string, unknown>) =>
      Response.json({ jsonrpc: "2.0", id: body.id, result: { resultType: "complete", ...result } });
    switch (body.method) {
      case "server/discover":
        return reply({
          supportedVersions: ["2026-07-28"],
          capabilities: { tools: {} },
          ttlMs: 0,
          cacheScope: "public",
        });
      case "tools/list":
        return reply({ tools: [tool("weather")] });
      case "tools/call":
        if (body.params.name !== "weather") {
          return Response.json({
            jsonrpc: "2.0",
            id: body.id,
            error: { code: -32602, message: `Unknown tool: ${body.params.name}` },
          });
        }
        return reply({
          content: [{ type: "text", text: "sunny" }],
          structuredContent: { sky: "clear" },
        });
    }
    return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "no" } });
  });
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  const client = createMcpClient(config(url), { log: () => {} });
  try {
    assert.deepEqual((await client.listTools()).map((each) => each.name), ["weather"]);
    assert.equal(client.version, "2026-07-28");
    const result = await client.callTool("weather", { city: "Lyon" }, {
      meta: { "example/who": "a1" },
    });
    assert.deepEqual(result, {
      resultType: "complete",
      content: [{ type: "text", text: "sunny" }],
      structuredContent: { sky: "clear" },
    });
    const refused = await client.callTool("météo", {});
    assert.deepEqual(refused, {
      content: [{ type: "text", text: "Hostile refused the call: Unknown tool: météo" }],
      isError: true,
    });

    assert.deepEqual(seen.map((each) => each.method), [
      "server/discover",
      "tools/list",
      "tools/call",
      "tools/call",
    ]);
    const call = seen[2]!;
    assert.equal(call.headers.get("MCP-Protocol-Version"), "2026-07-28");
    assert.equal(call.headers.get("Mcp-Method"), "tools/call");
    assert.equal(call.headers.get("Mcp-Name"), "weather");
    assert.equal(call.headers.get("Mcp-Session-Id"), null);
    assert.equal(seen[3]!.headers.get("Mcp-Name"), "=?base64?bcOpdMOpbw==?=");
    const meta = (call.body.params as { _meta: Record<string, unknown> })._meta;
    assert.equal(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert.deepEqual(meta["io.modelcontextprotocol/clientCapabilities"], {});
    assert.equal(meta["example/who"], "a1");
  } finally {
    await client.close();
    await server.shutdown();
  }
});
