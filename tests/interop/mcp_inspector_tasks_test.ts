// The MCP Inspector's CLI (npm @modelcontextprotocol/inspector, nobody here wrote it), headless,
// on MCP 2025-11-25, against the workspace: a tool listed `execution.taskSupport: "required"` is
// called as a task (its callToolStream), shown created, polled until it ends, and its result
// printed. Here those are upstream tasks the gateway relays: server-everything's
// `simulate-research-query`, and a tool of our own upstream whose task ends when the test says.
// The CLI has no tasks/get or tasks/cancel of its own (its `--method` refuses them), and no way to
// ask for a task on a tool that only may be one, so a gated call reaches it as the pending
// approval (tests/interop/mcp_sdk_tasks_test.ts drives that as a task with the SDK).
import assert from "node:assert/strict";
import { startEverythingHttp } from "../../testkit/upstreams.ts";
import { startTaskUpstream } from "../../testkit/task_upstream.ts";
import { startWorkspaceServer } from "../blackbox/support/workspace_support.ts";
import { until, writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";
import { ensureNpmCli } from "./npm_cli.ts";

const INSPECTOR_VERSION = "2.12.0";

Deno.test("the MCP Inspector CLI follows relayed tasks headless", async (t) => {
  const inspector = await ensureNpmCli({
    cache: "inspector",
    packageName: "@modelcontextprotocol/inspector",
    version: INSPECTOR_VERSION,
    script: "clients/cli/build/index.js",
    nodeMajor: 22,
  });
  const everything = await startEverythingHttp();
  const upstream = startTaskUpstream();
  const file = await writeUpstreamsFile([
    { name: "everything", title: "Everything", url: everything.url, gated: ["get-sum"] },
    { name: "up", title: "Upstream", url: upstream.url },
  ]);
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file });
  const { token } = await ws.token(["app.access", "upstream.everything", "upstream.up"]);
  // Its catalog and settings go to a home of its own; secrets (the header) stay in memory.
  const home = await Deno.makeTempDir({ prefix: "vestibule-inspector-" });
  const cli = async (tool: string, args: string[] = []) => {
    const run = await new Deno.Command(inspector.node, {
      args: [
        inspector.cli,
        "--server-url",
        `${ws.server.apiUrl}/api/mcp`,
        "--transport",
        "http",
        "--header",
        `Authorization: Bearer ${token}`,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        ...args.flatMap((arg) => ["--tool-arg", arg]),
        "--format",
        "json",
        "--quiet",
      ],
      env: { HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout);
    assert.ok(run.success, `${out}\n${new TextDecoder().decode(run.stderr)}`);
    return JSON.parse(out).result;
  };
  try {
    await t.step("server-everything's research task: relayed, polled, completed", async () => {
      const result = await cli("everything__simulate-research-query", ["topic=tides"]);
      const related = result._meta["io.modelcontextprotocol/related-task"];
      assert.match(related.taskId, /^relayed-/);
      assert.match(result.content[0].text, /# Research Report: tides/);
    });

    await t.step("our upstream's task: the CLI polls until the upstream ends it", async () => {
      const called = cli("up__deep");
      const task = await until("the upstream task", () => upstream.tasks.at(-1));
      // The CLI is polling the relayed task now; the upstream ends its own.
      await until("a poll", () => upstream.methods.includes("tasks/get") || undefined);
      upstream.finish(task.taskId, "the deep report");
      const result = await called;
      assert.deepEqual(result.content, [{ type: "text", text: "the deep report" }]);
      assert.match(result._meta["io.modelcontextprotocol/related-task"].taskId, /^relayed-/);
    });

    await t.step("a gated tool, not asked as a task, gets the pending approval", async () => {
      const result = await cli("everything__get-sum", ["a=1", "b=2"]);
      assert.equal(result.structuredContent.status, "pending");
    });
  } finally {
    await ws.close();
    await upstream.close();
    await everything.kill();
    await Deno.remove(home, { recursive: true });
  }
});
