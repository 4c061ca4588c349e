// The upstream client against the official server-everything over Streamable HTTP: a legacy
// (2025-11-25) server with sessions, SSE answers and progress, run as a real process.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { UpstreamError } from "../../src/gateway/mcp_client.ts";
import { startEverythingHttp, upstreamConfig } from "../../testkit/upstreams.ts";

function httpUpstream(url: string, timeoutMs = 10_000) {
  return upstreamConfig({ kind: "http", url, headers: { "X-Operator": "secret-value" } }, {
    timeoutMs,
  });
}

Deno.test("the upstream client speaks to server-everything over Streamable HTTP", async (t) => {
  const server = await startEverythingHttp();
  const lines: string[] = [];
  const client = createMcpClient(httpUpstream(server.url), { log: (line) => lines.push(line) });
  try {
    await t.step(
      "it negotiates 2025-11-25 after server/discover fails, and lists every tool",
      async () => {
        const tools = await client.listTools();
        assert.equal(client.version, "2025-11-25");
        const names = tools.map((tool) => tool.name);
        assert.ok(names.includes("echo") && names.includes("get-sum"), names.join());
      },
    );

    await t.step("a call returns the upstream's result unchanged", async () => {
      const result = await client.callTool("echo", { message: "hello" });
      assert.deepEqual(result.content, [{ type: "text", text: "Echo: hello" }]);
    });

    await t.step("structured content comes back as sent", async () => {
      const result = await client.callTool("get-structured-content", { location: "New York" });
      assert.equal(typeof result["structuredContent"], "object");
      assert.ok(result.isError !== true);
    });

    await t.step("an unknown tool comes back as the upstream's own tool error", async () => {
      // The SDK's server answers an unknown tool with an isError result, not a JSON-RPC error.
      const result = await client.callTool("no-such-tool", {});
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /Tool no-such-tool not found/);
    });

    await t.step("progress arrives before the answer does", async () => {
      const seen: string[] = [];
      const result = await client.callTool("trigger-long-running-operation", {
        duration: 0.4,
        steps: 2,
      }, { onProgress: (progress, total) => seen.push(`${progress}/${total}`) });
      seen.push("result");
      assert.deepEqual(seen, ["1/2", "2/2", "result"]);
      assert.match(JSON.stringify(result.content), /completed/);
    });

    await t.step(
      "an aborted call rejects as cancelled at once, and the session goes on",
      async () => {
        const controller = new AbortController();
        const started = performance.now();
        const call = client.callTool("trigger-long-running-operation", { duration: 5, steps: 5 }, {
          signal: controller.signal,
        });
        setTimeout(() => controller.abort(), 100);
        await assert.rejects(
          call,
          (error) => error instanceof UpstreamError && error.kind === "cancelled",
        );
        assert.ok(performance.now() - started < 1_000);
        const after = await client.callTool("echo", { message: "still here" });
        assert.deepEqual(after.content, [{ type: "text", text: "Echo: still here" }]);
      },
    );

    await t.step("concurrent calls share the session", async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => client.callTool("get-sum", { a: i, b: 1 })),
      );
      results.forEach((result, i) =>
        assert.match(JSON.stringify(result.content), new RegExp(`${i + 1}`))
      );
    });
  } finally {
    await client.close();
    await server.kill();
  }
  assert.ok(!lines.some((line) => line.includes("secret-value")));
});

Deno.test("a killed HTTP upstream fails the call at once, and its restart gets a new session", async () => {
  let server = await startEverythingHttp();
  const client = createMcpClient(httpUpstream(server.url), { log: () => {} });
  let changes = 0;
  client.onToolsChanged(() => changes++);
  try {
    await client.callTool("echo", { message: "one" });
    const call = client.callTool("trigger-long-running-operation", { duration: 5, steps: 5 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = performance.now();
    const failed = assert.rejects(call, (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "unreachable");
      assert.match(error.message, /^Everything is unreachable: /);
      return true;
    });
    await server.kill();
    await failed;
    assert.ok(performance.now() - started < 2_000);
    await assert.rejects(
      client.callTool("echo", { message: "down" }),
      (error) =>
        error instanceof UpstreamError && error.kind === "unreachable" &&
        error.message === "Everything is unreachable: the connection was refused",
    );

    server = await startEverythingHttp(server.port);
    const result = await client.callTool("echo", { message: "two" });
    assert.deepEqual(result.content, [{ type: "text", text: "Echo: two" }]);
    assert.equal(changes, 1);

    // Restarted while idle: the client still holds the old session id, which the new process
    // refuses (400 "No valid session ID provided"); one new session, one retry.
    await server.kill();
    server = await startEverythingHttp(server.port);
    const again = await client.callTool("echo", { message: "three" });
    assert.deepEqual(again.content, [{ type: "text", text: "Echo: three" }]);
    assert.equal(changes, 2);
  } finally {
    await client.close();
    await server.kill();
  }
});
