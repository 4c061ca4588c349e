// The upstream client's stdio transport against real children: the official server-everything
// and server-memory, and a small script child that crashes on request.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { UpstreamError } from "../../src/gateway/mcp_client.ts";
import {
  everythingStdioTransport,
  MEMORY,
  npmStdioTransport,
  upstreamConfig,
} from "../../testkit/upstreams.ts";

Deno.test("the upstream client runs server-everything as a stdio child", async (t) => {
  const lines: string[] = [];
  const client = createMcpClient(upstreamConfig(await everythingStdioTransport()), {
    log: (line) => lines.push(line),
  });
  try {
    await t.step("it lists the tools after the legacy handshake", async () => {
      const tools = await client.listTools();
      assert.equal(client.version, "2025-11-25");
      const names = tools.map((tool) => tool.name);
      assert.ok(names.includes("echo") && names.includes("get-sum"), names.join());
    });

    await t.step("calls run at once on one child and come back by id", async () => {
      const [echo, sum] = await Promise.all([
        client.callTool("echo", { message: "hi" }),
        client.callTool("get-sum", { a: 2, b: 3 }),
      ]);
      assert.deepEqual(echo.content, [{ type: "text", text: "Echo: hi" }]);
      assert.match(JSON.stringify(sum.content), /5/);
    });

    await t.step("progress arrives before the answer does", async () => {
      const seen: string[] = [];
      await client.callTool("trigger-long-running-operation", { duration: 0.4, steps: 2 }, {
        onProgress: (progress, total) => seen.push(`${progress}/${total}`),
      }).then(() => seen.push("result"));
      assert.deepEqual(seen, ["1/2", "2/2", "result"]);
    });

    await t.step(
      "an aborted call rejects as cancelled at once, and the child stays usable",
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
  } finally {
    await client.close();
  }
  assert.ok(lines.some((line) => JSON.parse(line).message === "upstream stderr"));
});

Deno.test("the upstream client keeps a knowledge graph in server-memory over stdio", async () => {
  const file = await Deno.makeTempFile({ suffix: ".jsonl" });
  const transport = await npmStdioTransport(MEMORY, [], { MEMORY_FILE_PATH: file });
  const client = createMcpClient(upstreamConfig(transport, { name: "memory", title: "Memory" }), {
    log: () => {},
  });
  try {
    const created = await client.callTool("create_entities", {
      entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
    });
    assert.ok(created.isError !== true, JSON.stringify(created));
    const graph = await client.callTool("read_graph", {});
    assert.match(JSON.stringify(graph), /wrote the first program/);
  } finally {
    await client.close();
    await Deno.remove(file);
  }
});
