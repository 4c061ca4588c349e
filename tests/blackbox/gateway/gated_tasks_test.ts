// Gated calls as MCP tasks, on the wire: 2025-11-25's experimental tasks (`task` in tools/call,
// tasks/get, tasks/result, tasks/list, tasks/cancel) and 2026-07-28's tasks extension
// (`resultType: "task"`, tasks/get with the result inlined, tasks/update, tasks/cancel), against
// a real server in front of a tiny upstream with a gated tool, an owner deciding on the approval
// page. Clients that ask for no task get today's pending approval.
// deno-lint-ignore-file no-explicit-any -- JSON-RPC messages are picked apart as JSON
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { type Browser, hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { rpcMessage, signIn, startWorkspaceServer } from "../support/workspace_support.ts";
import { listed, until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";

const SCOPES = ["app.access", "upstream.tiny", "members.request", "gates.redeliver"];
const TASKS = "io.modelcontextprotocol/tasks";
const DECLARED = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bb", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
};
const UNDECLARED = {
  ...DECLARED,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

Deno.test("gated calls answered as tasks in 2025-11-25 and 2026-07-28", async (t) => {
  const paid: string[] = [];
  const tiny = startTinyUpstream({
    tools: [{
      definition: {
        name: "pay",
        description: "Pays an invoice.",
        inputSchema: { type: "object", properties: { invoice: { type: "string" } } },
        outputSchema: { type: "object", properties: { paid: { type: "string" } } },
        execution: { taskSupport: "optional" },
      },
      handler: ({ invoice }) => (paid.push(String(invoice)), {
        content: [{ type: "text", text: `paid ${invoice}` }],
        structuredContent: { paid: String(invoice) },
      }),
    }, {
      definition: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
      handler: (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
    }],
  });
  const outbox = await tempOutbox();
  const receiver = await startTestReceiver();
  const file = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["pay"] },
  ]);
  const ws = await startWorkspaceServer({
    ...receiver.env,
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_MAIL: outbox.env,
    VESTIBULE_RATE_LIMITS: "off",
    ...adminEnv(),
  });
  const { token } = await ws.token(SCOPES);
  const { token: otherClient } = await ws.token(SCOPES, { clientId: "other-client" });
  const { token: member } = await ws.token(SCOPES, { accountId: ws.memberId });
  let id = 0;
  const legacy = async (
    bearer: string,
    method: string,
    params: Record<string, unknown>,
    version = "2025-11-25",
  ) => {
    const response = await ws.post(
      bearer,
      { jsonrpc: "2.0", id: ++id, method, params },
      { "MCP-Protocol-Version": version },
    );
    assert.equal(response.status, 200, await response.clone().text());
    return await rpcMessage(response);
  };
  const modern = async (
    method: string,
    params: Record<string, unknown>,
    meta: Record<string, unknown> = DECLARED,
  ) => {
    const name = params["name"] ?? params["taskId"];
    const response = await ws.post(
      token,
      { jsonrpc: "2.0", id: ++id, method, params: { ...params, _meta: meta } },
      {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
      },
    );
    return { status: response.status, message: await rpcMessage(response) };
  };
  const decide = async (browser: Browser, taskId: string, decision: string) => {
    const url = `${ws.server.authUrl}/approvals/${taskId}`;
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.text);
    const decided = await browser.post(url, { csrf: hiddenField(page.text, "csrf"), decision });
    return { status: decided.status, page: await browser.get(url) };
  };
  const status = (page: { text: string }) =>
    page.text.match(/<span id="gate-status">([^<]*)<\/span>/)?.[1];

  try {
    const owner = await signIn(ws, outbox, "owner@example.com");

    await t.step("the capabilities and tools/list say so, per revision", async () => {
      const init = async (version: string) =>
        (await legacy(token, "initialize", {
          protocolVersion: version,
          capabilities: {},
          clientInfo: { name: "bb", version: "1" },
        }, version)).result.capabilities;
      assert.deepEqual((await init("2025-11-25")).tasks, {
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      assert.equal((await init("2025-06-18")).tasks, undefined);
      const discover = await modern("server/discover", {});
      assert.deepEqual(discover.message.result.capabilities.extensions, { [TASKS]: {} });
      const tools = await listed(ws, token, "");
      const pay = tools.get("tiny__pay");
      assert.deepEqual(pay.execution, { taskSupport: "optional" });
      // Neither the pending approval nor the upstream's result is refused by what is listed.
      assert.equal(pay.outputSchema, undefined);
      // A tool that is not gated is not answered with a task: its own taskSupport is not passed on.
      assert.equal(tools.get("tiny__echo").execution, undefined);
      const own = tools.get("request_access_change");
      assert.deepEqual(own.execution, { taskSupport: "optional" });
      assert.deepEqual(own.outputSchema.properties.status.enum, [
        "pending",
        "approved",
        "declined",
        "withdrawn",
      ]);
    });

    await t.step("a client that asks for no task gets the pending approval", async () => {
      for (const version of ["2025-11-25", "2025-06-18"]) {
        const params = version === "2025-06-18"
          ? { name: "tiny__pay", arguments: { invoice: "A-0" }, task: {} } // not in 2025-06-18
          : { name: "tiny__pay", arguments: { invoice: "A-0" } };
        const { result } = await legacy(token, "tools/call", params, version);
        assert.deepEqual(Object.keys(result), ["content", "structuredContent"]);
        assert.deepEqual(Object.keys(result.structuredContent), [
          "gateId",
          "status",
          "approvalUrl",
          "summary",
        ]);
        assert.equal(result.structuredContent.status, "pending");
        assert.equal(result.content[0].text, JSON.stringify(result.structuredContent));
      }
      const { message } = await modern("tools/call", {
        name: "tiny__pay",
        arguments: { invoice: "A-0" },
      }, UNDECLARED);
      assert.equal(message.result.resultType, "complete");
      assert.equal(message.result.structuredContent.status, "pending");
    });

    await t.step("2025-11-25: working, approved, completed through tasks/result", async () => {
      const created = await legacy(token, "tools/call", {
        name: "tiny__pay",
        arguments: { invoice: "A-1" },
        task: { ttl: 1_000 },
      });
      const task = created.result.task;
      assert.deepEqual(Object.keys(created.result), ["task"]);
      assert.equal(task.status, "working");
      // Never shorter than the approval may wait, whatever the client asked for.
      assert.equal(task.ttl, null);
      assert.ok(task.pollInterval > 0 && task.pollInterval <= 600_000);
      assert.match(task.createdAt, ISO);
      assert.ok(task.statusMessage.includes(`/approvals/${task.taskId}`), task.statusMessage);
      assert.match(task.statusMessage, /owner of the business/);
      const got = await legacy(token, "tasks/get", { taskId: task.taskId });
      assert.deepEqual(got.result, task);
      const list = await legacy(token, "tasks/list", {});
      assert.ok(list.result.tasks.some((t: any) => t.taskId === task.taskId));
      const early = await legacy(token, "tasks/result", { taskId: task.taskId });
      assert.equal(early.error.code, -32602);
      assert.match(early.error.message, /no result yet \(working\)/);

      // Another client of the same account, and another member, find no such task.
      for (const bearer of [otherClient, member]) {
        for (const method of ["tasks/get", "tasks/cancel", "tasks/result"]) {
          const foreign = await legacy(bearer, method, { taskId: task.taskId });
          assert.equal(foreign.error.code, -32602, method);
        }
        const theirs = await legacy(bearer, "tasks/list", {});
        assert.ok(!theirs.result.tasks.some((t: any) => t.taskId === task.taskId));
      }

      assert.equal((await decide(owner, task.taskId, "approve")).status, 303);
      const done = await legacy(token, "tasks/get", { taskId: task.taskId });
      assert.equal(done.result.status, "completed");
      const result = await legacy(token, "tasks/result", { taskId: task.taskId });
      assert.deepEqual(result.result, {
        content: [{ type: "text", text: "paid A-1" }],
        structuredContent: { paid: "A-1" },
        _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
      });
      const late = await legacy(token, "tasks/cancel", { taskId: task.taskId });
      assert.equal(late.error.code, -32602);
      assert.match(late.error.message, /already ended \(completed\)/);
      assert.deepEqual(paid, ["A-1"]);
    });

    await t.step("2025-11-25: declined is failed; a cancel withdraws the approval", async () => {
      const call = async (invoice: string) =>
        (await legacy(token, "tools/call", {
          name: "tiny__pay",
          arguments: { invoice },
          task: {},
        })).result.task.taskId as string;
      const declined = await call("B-1");
      await decide(owner, declined, "decline");
      const failed = (await legacy(token, "tasks/get", { taskId: declined })).result;
      assert.equal(failed.status, "failed");
      assert.match(failed.statusMessage, /declined/);

      const withdrawn = await call("B-2");
      const cancelled = await legacy(token, "tasks/cancel", { taskId: withdrawn });
      assert.equal(cancelled.result.status, "cancelled");
      assert.equal(cancelled.result.taskId, withdrawn);
      const url = `${ws.server.authUrl}/approvals/${withdrawn}`;
      const page = await owner.get(url);
      assert.match(status(page) ?? "", /^Withdrawn by the agent that asked/);
      assert.ok(!page.text.includes('value="approve"'), "no approve button");
      // Posted anyway (with a form token from a pending approval's page): refused.
      const pending = await owner.get(`${ws.server.authUrl}/approvals/${await call("B-3")}`);
      const posted = await owner.post(url, {
        csrf: hiddenField(pending.text, "csrf"),
        decision: "approve",
      });
      assert.ok(posted.status >= 400, String(posted.status));
      assert.match(status(await owner.get(url)) ?? "", /^Withdrawn/);
      assert.ok(!paid.includes("B-2"));
      const again = await legacy(token, "tasks/cancel", { taskId: withdrawn });
      assert.match(again.error.message, /already ended \(cancelled\)/);
      // Who withdrew what: the audit log and the approval.decided event.
      const entry = (await createAuditLog(ws.server.store, Date.now).list(ws.businessId)).find((
        e,
      ) => e.gateId === withdrawn && e.action === "withdraw");
      assert.equal(entry?.actor, "agent");
      assert.equal(entry?.clientId, "test-client");
      assert.match(entry?.summary ?? "", /^Withdrew the request for approval: /);
      // No decision to deliver: a withdrawal mails nobody "Declined".
      const redelivered = await legacy(token, "tools/call", {
        name: "redeliver_decision",
        arguments: { gateId: withdrawn },
      });
      assert.equal(redelivered.result.isError, true);
      assert.match(redelivered.result.content[0].text, /was withdrawn by the agent that asked/);
      const event = await until(
        "the withdrawal event",
        () =>
          receiver.accepted.find((e) =>
            e.type === "approval.decided" && e.data.gateId === withdrawn
          ),
      );
      assert.equal(event.data.decision, "withdrawn");
      assert.equal(event.data.decidedBy, ws.ownerId);
    });

    await t.step("2025-11-25: bad input is refused in plain words", async () => {
      const unknown = await legacy(token, "tasks/get", { taskId: crypto.randomUUID() });
      assert.equal(unknown.error.code, -32602);
      assert.match(unknown.error.message, /no task .* for this client/);
      const missing = await legacy(token, "tasks/get", {});
      assert.equal(missing.error.code, -32602);
      const bad = await legacy(token, "tools/call", {
        name: "tiny__pay",
        arguments: {},
        task: { ttl: "soon" },
      });
      assert.equal(bad.error.code, -32602);
      assert.match(bad.error.message, /params\.task/);
      const notTask = await legacy(token, "tools/call", {
        name: "tiny__echo",
        arguments: {},
        task: {},
      });
      assert.equal(notTask.error.code, -32601);
      const update = await legacy(token, "tasks/update", { taskId: "x" });
      assert.equal(update.error.code, -32601);
      const old = await legacy(token, "tasks/get", { taskId: "x" }, "2025-06-18");
      assert.equal(old.error.code, -32601);
    });

    await t.step("2026-07-28: resultType task, the result inlined, -32021 undeclared", async () => {
      const created = await modern("tools/call", {
        name: "tiny__pay",
        arguments: { invoice: "C-1" },
      });
      assert.equal(created.status, 200);
      const task = created.message.result;
      assert.equal(task.resultType, "task");
      assert.equal(task.status, "working");
      assert.equal(task.ttlMs, null);
      assert.ok(task.pollIntervalMs > 0 && task.pollIntervalMs <= 600_000);
      assert.equal(task._meta["io.modelcontextprotocol/serverInfo"].name, "127.0.0.1/workspace");
      const { taskId } = task;

      const undeclared = await modern("tasks/get", { taskId }, UNDECLARED);
      assert.equal(undeclared.status, 400);
      assert.equal(undeclared.message.error.code, -32021);
      assert.deepEqual(undeclared.message.error.data, {
        requiredCapabilities: { extensions: { [TASKS]: {} } },
      });
      const working = await modern("tasks/get", { taskId });
      assert.equal(working.message.result.resultType, "complete");
      assert.equal(working.message.result.status, "working");
      assert.equal(working.message.result.result, undefined);
      const update = await modern("tasks/update", { taskId, inputResponses: {} });
      assert.equal(update.message.error.code, -32602);
      assert.match(update.message.error.message, /asks for no input/);
      const unknown = await modern("tasks/get", { taskId: "no-such-task" });
      assert.equal(unknown.message.error.code, -32602);
      const listGone = await modern("tasks/list", {});
      assert.equal(listGone.message.error.code, -32601);

      await decide(owner, taskId, "approve");
      const done = (await modern("tasks/get", { taskId })).message.result;
      assert.equal(done.status, "completed");
      assert.deepEqual(done.result, {
        content: [{ type: "text", text: "paid C-1" }],
        structuredContent: { paid: "C-1" },
      });
      // A cancel after completion is acknowledged and changes nothing (idempotent in 2026).
      const late = (await modern("tasks/cancel", { taskId })).message;
      assert.deepEqual(Object.keys(late.result), ["resultType", "_meta"]);
      assert.equal((await modern("tasks/get", { taskId })).message.result.status, "completed");
      const foreign = await modern("tasks/cancel", { taskId: crypto.randomUUID() });
      assert.equal(foreign.message.error.code, -32602);

      const declined = (await modern("tools/call", {
        name: "tiny__pay",
        arguments: { invoice: "C-2" },
      })).message.result.taskId;
      await decide(owner, declined, "decline");
      const refused = (await modern("tasks/get", { taskId: declined })).message.result;
      // Not `failed`: a tool result with isError is a completed task in 2026-07-28.
      assert.equal(refused.status, "completed");
      assert.equal(refused.result.isError, true);
      assert.match(refused.result.content[0].text, /declined/);

      const withdrawn = (await modern("tools/call", {
        name: "tiny__pay",
        arguments: { invoice: "C-3" },
      })).message.result.taskId;
      const cancelled = await modern("tasks/cancel", { taskId: withdrawn });
      assert.deepEqual(Object.keys(cancelled.message.result), ["resultType", "_meta"]);
      const read = (await modern("tasks/get", { taskId: withdrawn })).message.result;
      assert.equal(read.status, "cancelled");
    });

    await t.step("the Mcp-Name header of a tasks request is the task id", async () => {
      const response = await ws.post(token, {
        jsonrpc: "2.0",
        id: ++id,
        method: "tasks/get",
        params: { taskId: "abc", _meta: DECLARED },
      }, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": "xyz" });
      assert.equal(response.status, 400);
      assert.match((await response.json()).error.message, /does not match params\.taskId/);
    });

    await t.step("an own gated tool: the approval's end is the task's result", async () => {
      const created = await modern("tools/call", {
        name: "request_access_change",
        arguments: { change: "invite", email: "new@example.com" },
      });
      const { taskId } = created.message.result;
      assert.equal(created.message.result.resultType, "task");
      await decide(owner, taskId, "approve");
      const done = (await modern("tasks/get", { taskId })).message.result;
      assert.equal(done.status, "completed");
      assert.equal(done.result.structuredContent.gateId, taskId);
      assert.equal(done.result.structuredContent.status, "approved");
      assert.equal(done.result.isError, undefined);
    });

    await t.step("the operator's metrics count tasks by the state they entered", async () => {
      const text = await scrape(ws.server.adminUrl);
      const tasks = (state: string) =>
        sample(text, `vestibule_mcp_tasks_total{endpoint="workspace",state="${state}"}`);
      assert.equal(tasks("working"), 8);
      assert.equal(tasks("completed"), 3);
      // Declined: failed in 2025-11-25, a completed task with an isError result in 2026-07-28.
      assert.equal(tasks("failed"), 2);
      assert.equal(tasks("cancelled"), 2);
    });
  } finally {
    await ws.close();
    await tiny.close();
    await receiver.close();
  }
});

Deno.test("an approval nobody decided in time ends its task: failed (2025-11-25), isError (2026)", async () => {
  let clock = Date.now();
  const tiny = startTinyUpstream({
    tools: [{
      definition: { name: "pay", description: "Pays.", inputSchema: { type: "object" } },
      handler: () => ({ content: [{ type: "text", text: "paid" }] }),
    }],
  });
  const file = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["pay"] },
  ]);
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file }, { now: () => clock });
  const post = async (token: string, method: string, params: Record<string, unknown>) =>
    await rpcMessage(
      await ws.post(token, { jsonrpc: "2.0", id: 1, method, params }, {
        "MCP-Protocol-Version": "2025-11-25",
      }),
    );
  try {
    const { token } = await ws.token(SCOPES);
    const created = await post(token, "tools/call", { name: "tiny__pay", arguments: {}, task: {} });
    const { taskId, statusMessage } = created.result.task;
    const deadline = new Date(clock + 24 * 60 * 60 * 1000).toISOString();
    assert.ok(statusMessage.includes(`by ${deadline}`), statusMessage);
    clock += 24 * 60 * 60 * 1000 + 1_000;
    // A fresh token: the first one has long expired by now.
    const { token: later } = await ws.token(SCOPES);
    const failed = (await post(later, "tasks/get", { taskId })).result;
    assert.equal(failed.status, "failed");
    assert.match(failed.statusMessage, /approval expired and the call was not made/);
    const response = await ws.post(later, {
      jsonrpc: "2.0",
      id: 2,
      method: "tasks/get",
      params: { taskId, _meta: DECLARED },
    }, { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": taskId });
    const modern = (await rpcMessage(response)).result;
    assert.equal(modern.status, "completed");
    assert.equal(modern.result.isError, true);
  } finally {
    await ws.close();
    await tiny.close();
  }
});
