// The official MCP SDK v1 client's experimental tasks API (nobody here wrote it), on MCP
// 2025-11-25, against a gated tool of @modelcontextprotocol/server-everything behind the
// workspace: callToolStream sees the task created and working while the owner approves on the
// approval page, then completes with the upstream's own result; getTask, listTasks and
// cancelTask do what they say, and a cancelled task's approval reads withdrawn. Its plain
// callTool, which asks for no task, still gets the pending approval.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { startEverythingHttp } from "../../testkit/upstreams.ts";
import { hiddenField, tempOutbox } from "../blackbox/support/accounts_browser.ts";
import { signIn, startWorkspaceServer } from "../blackbox/support/workspace_support.ts";
import { writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";

Deno.test("the SDK v1 client's tasks API waits for an owner's approval of a gated call", async (t) => {
  const everything = await startEverythingHttp();
  const file = await writeUpstreamsFile([
    { name: "everything", title: "Everything", url: everything.url, gated: ["get-sum"] },
  ]);
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_MAIL: outbox.env,
    // One page of tools: the SDK knows a tool's taskSupport from the last page it listed.
    VESTIBULE_WORKSPACE_TOOLS: "gateway",
  });
  const { token } = await ws.token(["app.access", "upstream.everything"]);
  const client = new Client({ name: "vestibule-tasks-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${ws.server.apiUrl}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const decide = async (taskId: string, decision: "approve" | "decline") => {
    const url = `${ws.server.authUrl}/approvals/${taskId}`;
    const page = await human.get(url);
    assert.equal(page.status, 200, page.text);
    const posted = await human.post(url, { csrf: hiddenField(page.text, "csrf"), decision });
    assert.equal(posted.status, 303, posted.text);
    return url;
  };
  const human = await signIn(ws, outbox, "owner@example.com");
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "127.0.0.1/workspace");
    const { tools, nextCursor } = await client.listTools();
    assert.equal(nextCursor, undefined);
    const sum = tools.find((tool: { name: string }) => tool.name === "everything__get-sum");
    assert.equal(sum?.execution?.taskSupport, "optional");

    await t.step("callToolStream: created, working, approved, completed", async () => {
      const seen: string[] = [];
      let result: Record<string, unknown> | undefined;
      const stream = client.experimental.tasks.callToolStream({
        name: "everything__get-sum",
        arguments: { a: 2, b: 3 },
      });
      for await (const message of stream) {
        seen.push(message.type === "taskStatus" ? message.task.status : message.type);
        if (message.type === "taskCreated") {
          assert.equal(message.task.status, "working");
          assert.equal(message.task.ttl, null);
          // The owner decides while the client waits.
          await decide(message.task.taskId, "approve");
        }
        if (message.type === "result") result = message.result;
        if (message.type === "error") throw message.error;
      }
      assert.equal(seen[0], "taskCreated");
      assert.equal(seen.at(-2), "completed");
      assert.equal(seen.at(-1), "result");
      const text = (result?.["content"] as { text: string }[])[0]!.text;
      assert.match(text, /5/);
    });

    await t.step("getTask, listTasks, cancelTask; the approval reads withdrawn", async () => {
      const stream = client.experimental.tasks.callToolStream({
        name: "everything__get-sum",
        arguments: { a: 1, b: 1 },
      });
      const first = await stream.next();
      assert.equal(first.value?.type, "taskCreated");
      const taskId = first.value.type === "taskCreated" ? first.value.task.taskId : "";
      await stream.return(undefined);
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.status, "working");
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.ok(tasks.some((listed: { taskId: string }) => listed.taskId === taskId));
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      assert.equal(cancelled.status, "cancelled");
      const page = await human.get(`${ws.server.authUrl}/approvals/${taskId}`);
      assert.match(page.text, /<span id="gate-status">Withdrawn by the agent that asked/);
      await assert.rejects(client.experimental.tasks.cancelTask(taskId), /already ended/);
    });

    await t.step("a declined task fails; plain callTool still gets the approval", async () => {
      const stream = client.experimental.tasks.callToolStream({
        name: "everything__get-sum",
        arguments: { a: 4, b: 4 },
      });
      const types: string[] = [];
      for await (const message of stream) {
        types.push(message.type);
        if (message.type === "taskCreated") await decide(message.task.taskId, "decline");
        if (message.type === "error") assert.match(message.error.message, /failed/);
      }
      assert.equal(types.at(-1), "error");
      const plain = await client.callTool({
        name: "everything__get-sum",
        arguments: { a: 1, b: 2 },
      });
      assert.equal((plain.structuredContent as { status: string }).status, "pending");
    });
  } finally {
    await client.close();
    await ws.close();
    await everything.kill();
  }
});
