// An upstream's own task relayed, between two parties nobody here wrote: the official SDK v1
// client's experimental tasks API, on MCP 2025-11-25, calls server-everything's
// `simulate-research-query` (a tool it runs only as a task, execution.taskSupport "required")
// through the workspace. The client sees a Vestibule task created, polls it while the upstream
// works through its stages, and gets the upstream's report; a cancel reaches the upstream.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { startEverythingHttp } from "../../testkit/upstreams.ts";
import { startWorkspaceServer } from "../blackbox/support/workspace_support.ts";
import { writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";

const TOOL = "everything__simulate-research-query";

Deno.test("the SDK v1 client's tasks API follows server-everything's own task", async (t) => {
  const everything = await startEverythingHttp();
  const file = await writeUpstreamsFile([
    { name: "everything", title: "Everything", url: everything.url },
  ]);
  const ws = await startWorkspaceServer({
    VESTIBULE_UPSTREAMS: file,
    // One page of tools: the SDK knows a tool's taskSupport from the last page it listed.
    VESTIBULE_WORKSPACE_TOOLS: "gateway",
  });
  const { token } = await ws.token(["app.access", "upstream.everything"]);
  const client = new Client({ name: "vestibule-relay-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${ws.server.apiUrl}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const research = tools.find((tool: { name: string }) => tool.name === TOOL);
    assert.equal(research?.execution?.taskSupport, "required");

    await t.step(
      "callToolStream: created, working, completed with the upstream's report",
      async () => {
        const seen: string[] = [];
        let result: Record<string, unknown> | undefined;
        const stream = client.experimental.tasks.callToolStream({
          name: TOOL,
          arguments: { topic: "tides" },
        });
        for await (const message of stream) {
          seen.push(message.type === "taskStatus" ? message.task.status : message.type);
          if (message.type === "taskCreated") {
            assert.match(message.task.taskId, /^relayed-/);
            assert.equal(message.task.status, "working");
            // server-everything's own: 5 minutes, polled each second.
            assert.equal(message.task.ttl, 300_000);
            assert.equal(message.task.pollInterval, 1_000);
          }
          if (message.type === "result") result = message.result;
          if (message.type === "error") throw message.error;
        }
        assert.equal(seen[0], "taskCreated");
        assert.ok(seen.includes("working"), seen.join());
        assert.equal(seen.at(-2), "completed");
        assert.equal(seen.at(-1), "result");
        const text = (result?.["content"] as { text: string }[])[0]!.text;
        assert.match(text, /tides/);
      },
    );

    await t.step("getTask and cancelTask reach the upstream's task", async () => {
      const stream = client.experimental.tasks.callToolStream({
        name: TOOL,
        arguments: { topic: "cancelled" },
      });
      const first = await stream.next();
      assert.equal(first.value?.type, "taskCreated");
      const taskId = first.value.type === "taskCreated" ? first.value.task.taskId : "";
      await stream.return(undefined);
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.status, "working");
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      assert.equal(cancelled.status, "cancelled");
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
      await assert.rejects(client.experimental.tasks.cancelTask(taskId), /already ended/);
    });
  } finally {
    await client.close();
    await ws.close();
    await everything.kill();
  }
});
