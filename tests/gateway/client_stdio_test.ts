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
import { stdioChildScript } from "../../testkit/stdio_child.ts";

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

/** A stdio MCP server in a few lines: legacy handshake, echo, a line too long, and a crash. */
const SCRIPT_CHILD = stdioChildScript(`
if (message.method === "initialize") {
  reply({ protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "s", version: "0" } });
} else if (message.method === "tools/list") {
  reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
} else if (message.method === "tools/call" && message.params.name === "crash") {
  console.error("crashing on purpose");
  Deno.exit(3);
} else if (message.method === "tools/call" && message.params.name === "big") {
  reply({ content: [{ type: "text", text: "x".repeat(200000) }] });
} else if (message.method === "tools/call") {
  reply({ content: [{ type: "text", text: "pid " + Deno.pid }] });
}
`);

Deno.test("a stdio child that exits fails its calls and is started again on next use", async () => {
  const script = await Deno.makeTempFile({ suffix: ".js" });
  await Deno.writeTextFile(script, SCRIPT_CHILD);
  const waits: number[] = [];
  const lines: string[] = [];
  let clock = 1_000_000;
  const client = createMcpClient(
    upstreamConfig({
      kind: "stdio",
      command: Deno.execPath(),
      args: ["run", "--no-lock", script],
      env: { NO_COLOR: "1" },
      cwd: null,
    }, { name: "script", title: "Script", maxResponseBytes: 65_536 }),
    {
      log: (line) => lines.push(line),
      now: () => clock,
      sleep: (ms) => {
        waits.push(ms);
        clock += ms;
        return Promise.resolve();
      },
    },
  );
  let changes = 0;
  client.onToolsChanged(() => changes++);
  try {
    const first = await client.callTool("echo", {});
    await assert.rejects(
      client.callTool("big", {}),
      (error) => error instanceof UpstreamError && error.kind === "too_large",
    );
    assert.deepEqual(
      await client.callTool("echo", {}),
      first,
      "a long line leaves the child running",
    );

    await assert.rejects(client.callTool("crash", {}), (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "unreachable");
      assert.equal(error.message, "Script is unreachable: its process exited (code 3)");
      return true;
    });
    const second = await client.callTool("echo", {});
    assert.notDeepEqual(second, first, "a new process answers");
    assert.deepEqual(waits, [1_000]);
    assert.equal(changes, 1);

    await assert.rejects(client.callTool("crash", {}));
    clock += 500;
    await client.callTool("echo", {});
    assert.deepEqual(waits, [1_000, 500], "the back-off resets once a child has answered");
    const stderr = lines.map((line) => JSON.parse(line)).find((line) =>
      line.message === "upstream stderr"
    );
    assert.deepEqual([stderr.level, stderr.upstream, stderr.line], [
      "warn",
      "script",
      "crashing on purpose",
    ]);
  } finally {
    await client.close();
    await Deno.remove(script);
  }
});

/**
 * A stdio child that prints a banner and waits until it is logged (a flag file the test's log
 * writes), then on "flood" prints 100,000 lines (about 14 MB) to stderr before it answers.
 */
const NOISY_CHILD = `
const [flag] = Deno.args;
const encoder = new TextEncoder();
const err = (text) => Deno.stderr.writeSync(encoder.encode(text));
err("noisy server 1.0\\nlistening on stdio\\n");
for (;;) {
  try {
    Deno.statSync(flag);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
const write = (message) => Deno.stdout.writeSync(encoder.encode(JSON.stringify(message) + "\\n"));
let buffer = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffer += chunk;
  let end;
  while ((end = buffer.indexOf("\\n")) !== -1) {
    const message = JSON.parse(buffer.slice(0, end));
    buffer = buffer.slice(end + 1);
    const reply = (result) => write({ jsonrpc: "2.0", id: message.id, result });
    if (message.id === undefined) continue;
    if (message.method === "initialize") {
      reply({ protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "n", version: "0" } });
    } else if (message.params?.name === "flood") {
      err("z".repeat(1_000) + "\\n");
      for (let block = 0; block < 100; block++) {
        let text = "";
        for (let i = 0; i < 1_000; i++) text += "noise " + (block * 1_000 + i) + " " + "y".repeat(130) + "\\n";
        err(text);
      }
      reply({ content: [{ type: "text", text: "flooded" }] });
    } else if (message.params?.name === "exit") {
      Deno.exit(0);
    } else {
      reply({ tools: [] });
    }
  }
}
`;

Deno.test("a stdio child's stderr is logged within a budget, its banner at info", async () => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/noisy.js`;
  const flag = `${dir}/banner-logged`;
  await Deno.writeTextFile(script, NOISY_CHILD);
  const logged: Record<string, unknown>[] = [];
  let clock = 1_000_000;
  const client = createMcpClient(
    upstreamConfig({
      kind: "stdio",
      command: Deno.execPath(),
      args: ["run", "--no-lock", `--allow-read=${dir}`, script, flag],
      env: { NO_COLOR: "1" },
      cwd: null,
    }, { name: "noisy", title: "Noisy" }),
    {
      log: (line) => {
        const entry = JSON.parse(line);
        logged.push(entry);
        if (entry.line === "listening on stdio") Deno.writeTextFileSync(flag, "");
      },
      now: () => clock,
      sleep: (ms) => {
        clock += ms;
        return Promise.resolve();
      },
    },
  );
  const stderrOf = () => logged.filter((entry) => entry.message === "upstream stderr");
  try {
    assert.deepEqual((await client.callTool("flood", {})).content, [
      { type: "text", text: "flooded" },
    ]);
    // Its exit reads its stderr to the end.
    await assert.rejects(client.callTool("exit", {}));
    const lines = stderrOf();
    assert.equal(lines.length, 100, "100 lines a minute per upstream");
    assert.deepEqual(
      lines.slice(0, 2).map((entry) => [entry.level, entry.line]),
      [["info", "noisy server 1.0"], ["info", "listening on stdio"]],
      "what it printed before it answered is its banner",
    );
    assert.deepEqual(
      [lines[2]!.level, lines[2]!.line],
      ["warn", `${"z".repeat(500)}…`],
      "a long line is cut",
    );
    assert.equal(lines[3]!.line, `noise 0 ${"y".repeat(130)}`);
    const dropped = logged.filter((entry) => entry.message === "upstream stderr lines dropped");
    assert.deepEqual(dropped.map((entry) => [entry.level, entry.upstream, entry.dropped]), [
      ["warn", "noisy", 100_003 - 100],
    ]);
    const exit = logged.findIndex((entry) => entry.message === "upstream process exited");
    assert.ok(logged.indexOf(dropped[0]!) < exit, "the count comes before the exit");

    // A minute later the next child's lines are logged again.
    clock += 60_000;
    await Deno.remove(flag);
    await client.callTool("flood", {});
    assert.equal(stderrOf()[100]!.line, "noisy server 1.0");
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
