// An upstream's own tasks relayed (2025-11-25 experimental tasks upstream): a call the agent
// makes as a task, of a tool its upstream may run as one, becomes a Vestibule task whose status
// follows the upstream's, whose result is the upstream's and whose cancel reaches the upstream;
// in both revisions the agent speaks, against a real server in front of an upstream of our own
// (testkit/task_upstream.ts) whose tasks move only when the test moves them.
// deno-lint-ignore-file no-explicit-any -- JSON-RPC messages are picked apart as JSON
import assert from "node:assert/strict";
import { startTaskUpstream } from "../../../testkit/task_upstream.ts";
import { rpcMessage, startWorkspaceServer } from "../support/workspace_support.ts";
import { listed, until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";

const SCOPES = ["app.access", "upstream.up"];
const TASKS = "io.modelcontextprotocol/tasks";
const DECLARED = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bb", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
};
const UNDECLARED = { ...DECLARED, "io.modelcontextprotocol/clientCapabilities": {} };

Deno.test("an upstream's tasks are relayed: status, result and cancel", async (t) => {
  const upstream = startTaskUpstream();
  const file = await writeUpstreamsFile([{ name: "up", title: "Upstream", url: upstream.url }]);
  const ws = await startWorkspaceServer({
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_RATE_LIMITS: "off",
    ...adminEnv(),
  });
  const { token } = await ws.token(SCOPES);
  const { token: otherClient } = await ws.token(SCOPES, { clientId: "other-client" });
  const { token: member } = await ws.token(SCOPES, { accountId: ws.memberId });
  let id = 0;
  const legacy = async (method: string, params: Record<string, unknown>, bearer = token) => {
    const response = await ws.post(
      bearer,
      { jsonrpc: "2.0", id: ++id, method, params },
      { "MCP-Protocol-Version": "2025-11-25" },
    );
    assert.equal(response.status, 200, await response.clone().text());
    return await rpcMessage(response);
  };
  const modern = async (method: string, params: Record<string, unknown>) => {
    const name = params["name"] ?? params["taskId"];
    const response = await ws.post(
      token,
      { jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: DECLARED } },
      { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": String(name) },
    );
    assert.equal(response.status, 200, await response.clone().text());
    return await rpcMessage(response);
  };
  /** A research call as a task (2025-11-25): our task, and the upstream's it follows. */
  const started = async (topic: string) => {
    const created = await legacy("tools/call", {
      name: "up__research",
      arguments: { topic },
      task: { ttl: 1000 },
    });
    assert.ok(created.result?.task, JSON.stringify(created));
    const upstreamTask = upstream.tasks.at(-1)!;
    assert.deepEqual(upstreamTask.arguments, { topic });
    return { task: created.result.task, upstreamId: upstreamTask.taskId };
  };

  try {
    await t.step("tools/list passes on the task support of a tool whose tasks relay", async () => {
      const tools = await listed(ws, token, "up__");
      assert.deepEqual(tools.get("up__research").execution, { taskSupport: "optional" });
      assert.deepEqual(tools.get("up__deep").execution, { taskSupport: "required" });
      assert.equal(tools.get("up__plain").execution, undefined);
    });

    await t.step("a task call becomes a task of ours following the upstream's", async () => {
      const { task, upstreamId } = await started("tides");
      assert.match(task.taskId, /^relayed-[0-9a-f-]{36}$/);
      assert.notEqual(task.taskId, upstreamId);
      assert.equal(task.status, "working");
      // The upstream's own TTL and poll interval, not the one the agent asked for.
      assert.equal(task.ttl, 60 * 60 * 1000);
      assert.equal(task.pollInterval, 2_000);
      const working = (await legacy("tasks/get", { taskId: task.taskId })).result;
      assert.equal(working.status, "working");
      assert.equal(working.statusMessage, "Upstream is working on it: Reading sources");
      const early = await legacy("tasks/result", { taskId: task.taskId });
      assert.equal(early.error.code, -32602);
      upstream.finish(upstreamId, "the tides report");
      const done = (await legacy("tasks/get", { taskId: task.taskId })).result;
      assert.equal(done.status, "completed");
      const result = (await legacy("tasks/result", { taskId: task.taskId })).result;
      assert.deepEqual(result.content, [{ type: "text", text: "the tides report" }]);
      assert.deepEqual(result._meta["io.modelcontextprotocol/related-task"], {
        taskId: task.taskId,
      });
      // The end is kept: later reads do not ask the upstream again.
      const asked = upstream.methods.length;
      assert.equal((await legacy("tasks/get", { taskId: task.taskId })).result.status, "completed");
      assert.equal(upstream.methods.length, asked);
      const cancelled = await legacy("tasks/cancel", { taskId: task.taskId });
      assert.equal(cancelled.error.code, -32602);
      assert.match(cancelled.error.message, /already ended \(completed\)/);
    });

    await t.step("a call that is not a task reaches the upstream as a plain call", async () => {
      const before = upstream.tasks.length;
      const plain = await legacy("tools/call", { name: "up__research", arguments: {} });
      assert.deepEqual(plain.result.content, [{ type: "text", text: "research answered at once" }]);
      assert.equal(upstream.tasks.length, before);
    });

    await t.step("unknown and foreign task ids are not found", async () => {
      const { task } = await started("foreign");
      for (const bearer of [otherClient, member]) {
        const got = await legacy("tasks/get", { taskId: task.taskId }, bearer);
        assert.equal(got.error.code, -32602);
        const cancel = await legacy("tasks/cancel", { taskId: task.taskId }, bearer);
        assert.equal(cancel.error.code, -32602);
      }
      const unknown = await legacy("tasks/get", { taskId: "relayed-nothing-here" });
      assert.equal(unknown.error.code, -32602);
      assert.equal(upstream.tasks.at(-1)!.status, "working");
    });

    await t.step("a cancel reaches the upstream", async () => {
      const { task, upstreamId } = await started("cancel me");
      const cancelled = (await legacy("tasks/cancel", { taskId: task.taskId })).result;
      assert.equal(cancelled.status, "cancelled");
      assert.equal(upstream.tasks.find((each) => each.taskId === upstreamId)!.status, "cancelled");
      assert.equal((await legacy("tasks/get", { taskId: task.taskId })).result.status, "cancelled");
      // The audit log: the call that started the task, and who ended it.
      // The call's entry is appended as its answer goes out, without waiting for the store.
      const mine = await until("both audit entries", async () => {
        const entries = await createAuditLog(ws.server.store, Date.now).list(ws.businessId);
        const found = entries.filter((entry) => entry.summary.includes(task.taskId));
        return found.length === 2 ? found : undefined;
      });
      assert.deepEqual(mine.map((entry) => [entry.actor, entry.clientId, entry.action]), [
        ["agent", "test-client", "up__research"],
        ["agent", "test-client", "up__research"],
      ]);
      assert.match(
        mine[0]!.summary,
        /^Relayed task relayed-\S+ cancelled: Cancelled by this client/,
      );
      assert.match(
        mine[1]!.summary,
        /^Called research of Upstream: answered \(ok\) .*; relayed as task/,
      );
    });

    await t.step("an upstream's failure is a failed task with its result", async () => {
      const { task, upstreamId } = await started("fail");
      upstream.fail(upstreamId, "the archive is closed");
      const failed = (await legacy("tasks/get", { taskId: task.taskId })).result;
      assert.equal(failed.status, "failed");
      const result = (await legacy("tasks/result", { taskId: task.taskId })).result;
      assert.equal(result.isError, true);
      assert.deepEqual(result.content, [{ type: "text", text: "the archive is closed" }]);
    });

    await t.step("an upstream that forgets the task ends it, saying so", async () => {
      const { task, upstreamId } = await started("forget");
      upstream.forget(upstreamId);
      const lost = (await legacy("tasks/get", { taskId: task.taskId })).result;
      assert.equal(lost.status, "failed");
      assert.match(lost.statusMessage, /^Upstream no longer knows the task \(.*\): its result/);
    });

    await t.step(
      "an upstream that asks its caller for input is refused and cancelled",
      async () => {
        const { task, upstreamId } = await started("ask me");
        upstream.askInput(upstreamId);
        const refused = (await legacy("tasks/get", { taskId: task.taskId })).result;
        assert.equal(refused.status, "failed");
        assert.match(refused.statusMessage, /asked for input during the task \(input_required\)/);
        assert.equal(
          upstream.tasks.find((each) => each.taskId === upstreamId)!.status,
          "cancelled",
        );
        const result = (await legacy("tasks/result", { taskId: task.taskId })).result;
        assert.equal(result.isError, true);
      },
    );

    await t.step("an upstream that answers at once gives a task already ended", async () => {
      const created = await legacy("tools/call", { name: "up__quick", arguments: {}, task: {} });
      const { taskId } = created.result.task;
      assert.equal(created.result.task.status, "completed");
      const result = (await legacy("tasks/result", { taskId })).result;
      assert.deepEqual(result.content, [{ type: "text", text: "quick answered at once" }]);
    });

    await t.step(
      "a tool that runs only as a task is refused to a call that is not one",
      async () => {
        const calls = upstream.methods.length;
        const plain = await legacy("tools/call", { name: "up__deep", arguments: {} });
        assert.equal(plain.error.code, -32601);
        assert.match(plain.error.message, /runs only as a task .*call it with params\.task/);
        const undeclared = await ws.post(token, {
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name: "up__deep", arguments: {}, _meta: UNDECLARED },
        }, {
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "tools/call",
          "Mcp-Name": "up__deep",
        });
        // 2026-07-28 "Capabilities": on HTTP, a missing capability is 400.
        assert.equal(undeclared.status, 400);
        const refused = await undeclared.json();
        assert.equal(refused.error.code, -32021);
        assert.deepEqual(refused.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });
        assert.equal(upstream.methods.length, calls, "nothing reached the upstream");
      },
    );

    await t.step("tasks/list holds the relayed tasks of this client only", async () => {
      const mine = (await legacy("tasks/list", {})).result.tasks;
      assert.equal(mine.length, 7);
      assert.ok(mine.every((task: any) => task.taskId.startsWith("relayed-")));
      assert.equal((await legacy("tasks/list", {}, otherClient)).result.tasks.length, 0);
    });

    await t.step("2026-07-28: the relayed task's result is inlined in tasks/get", async () => {
      const created = (await modern("tools/call", { name: "up__research", arguments: {} })).result;
      assert.equal(created.resultType, "task");
      assert.equal(created.ttlMs, 60 * 60 * 1000);
      upstream.finish(upstream.tasks.at(-1)!.taskId, "modern report");
      const done = (await modern("tasks/get", { taskId: created.taskId })).result;
      assert.equal(done.status, "completed");
      assert.deepEqual(done.result.content, [{ type: "text", text: "modern report" }]);
      // The upstream's own task id stays behind the gateway.
      assert.equal(done.result._meta, undefined);
    });

    await t.step("the metrics count tasks entering each state, each end once", async () => {
      const text = await scrape(ws.server.adminUrl);
      const tasks = (state: string) =>
        sample(text, `vestibule_mcp_tasks_total{endpoint="workspace",state="${state}"}`);
      assert.equal(tasks("working"), 8);
      assert.equal(tasks("completed"), 3);
      assert.equal(tasks("failed"), 3);
      assert.equal(tasks("cancelled"), 1);
    });
  } finally {
    await ws.close();
    await upstream.close();
  }
});
