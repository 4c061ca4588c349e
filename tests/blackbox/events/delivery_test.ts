import assert from "node:assert/strict";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import {
  signIn,
  startWorkspaceServer,
  type WorkspaceServer,
} from "../support/workspace_support.ts";
import { storeFile } from "../support/server_runtime.ts";

const WORKFLOW = {
  id: "wf-1",
  name: "Refund triage",
  description: "",
  kind: "paid",
  costPerRunCents: 40,
  status: "active",
  updatedAt: 0,
} as const;

async function simulate(ws: WorkspaceServer, token: string, workflowId: string) {
  const { status, message } = await ws.call(token, "simulate_workflow", { workflowId });
  assert.equal(status, 200);
  assert.equal(message.result.isError, undefined, JSON.stringify(message));
}

Deno.test("events: an approved run and a direct write reach the endpoint signed, in order, saying who asked and who decided", async () => {
  const receiver = await startTestReceiver();
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env, ...receiver.env });
  try {
    const b = ws.businessId;
    await ws.workspace.workflows.put(b, WORKFLOW);
    await ws.workspace.triggers.put(b, {
      id: "t-1",
      name: "New order",
      event: "order.created",
      workflowId: "wf-1",
      enabled: true,
      updatedAt: 0,
    });
    const { token } = await ws.token(["app.access", "workflows.run", "triggers.manage"]);
    const started = await ws.call(token, "start_workflow", { workflowId: "wf-1" });
    const pending = started.message.result.structuredContent;
    assert.equal(pending.status, "pending");
    const owner = await signIn(ws, outbox, "owner@example.com");
    const page = await owner.get(pending.approvalUrl);
    const decided = await owner.post(pending.approvalUrl, {
      csrf: hiddenField(page.text, "csrf"),
      decision: "approve",
    });
    assert.equal(decided.status, 303);
    const [approval, run] = await receiver.waitFor(2);
    const [stored] = await ws.workspace.runs.list(b);
    const who = {
      businessId: b,
      gateId: pending.gateId,
      decidedBy: ws.ownerId,
      requestedBy: ws.ownerId,
      clientId: "test-client",
      clientName: "test-client",
    };
    assert.equal(approval!.type, "approval.decided");
    assert.deepEqual(approval!.data, {
      ...who,
      decision: "approved",
      tool: "start_workflow",
      scope: "workflows.run",
      summary: pending.summary,
      applied: true,
      outcome: pending.summary,
    });
    assert.equal(run!.type, "workflow_run.requested");
    assert.deepEqual(run!.data, {
      ...who,
      runId: stored!.id,
      workflowId: "wf-1",
      workflowName: "Refund triage",
      workflowKind: "paid",
      costCents: 40,
    });
    assert.ok(!Number.isNaN(Date.parse(run!.timestamp)));

    const disabled = await ws.call(token, "disable_trigger", { triggerId: "t-1" });
    assert.equal(disabled.status, 200);
    const [, , trigger] = await receiver.waitFor(3);
    assert.deepEqual({ type: trigger!.type, data: trigger!.data }, {
      type: "trigger.disabled",
      data: {
        businessId: b,
        accountId: ws.ownerId,
        clientId: "test-client",
        clientName: "test-client",
        tool: "disable_trigger",
        triggerId: "t-1",
        name: "New order",
        workflowId: "wf-1",
      },
    });
    assert.equal(new Set(receiver.accepted.map((e) => e.id)).size, 3, "one id per event");
  } finally {
    await ws.close();
    await receiver.close();
  }
});

Deno.test("events: an endpoint that is down gets every event once it is back, once and in order", async () => {
  const receiver = await startTestReceiver();
  const ws = await startWorkspaceServer(receiver.env);
  try {
    const { token } = await ws.token(["app.access", "workflows.simulate"]);
    for (const id of ["wf-1", "wf-2", "wf-3"]) {
      await ws.workspace.workflows.put(ws.businessId, { ...WORKFLOW, id });
    }
    receiver.answer(503);
    for (const id of ["wf-1", "wf-2", "wf-3"]) await simulate(ws, token, id);
    while (receiver.attempts() === 0) await new Promise((r) => setTimeout(r, 20));
    receiver.answer(200);
    // The first retry comes 5 seconds after the failed attempt; the rest follow at once.
    const events = await receiver.waitFor(3);
    assert.deepEqual(events.map((e) => [e.type, e.data.workflowId]), [
      ["workflow_run.simulated", "wf-1"],
      ["workflow_run.simulated", "wf-2"],
      ["workflow_run.simulated", "wf-3"],
    ]);
    assert.equal(events[0]!.data.runId, null, "a simulation starts no run");
    assert.equal(receiver.attempts(), 4, "only the first event was tried while it was down");
  } finally {
    await ws.close();
    await receiver.close();
  }
});

Deno.test("events: what one process recorded and could not deliver, the next one delivers", async () => {
  const receiver = await startTestReceiver();
  const dir = await Deno.makeTempDir();
  const path = storeFile(`${dir}/vestibule`);
  try {
    receiver.answer(503);
    const first = await startWorkspaceServer(receiver.env, { dataUrl: path });
    const { token } = await first.token(["app.access", "workflows.simulate"]);
    await first.workspace.workflows.put(first.businessId, WORKFLOW);
    await simulate(first, token, "wf-1");
    await simulate(first, token, "wf-1");
    while (receiver.attempts() === 0) await new Promise((r) => setTimeout(r, 20));
    await first.close();
    assert.deepEqual(receiver.accepted, []);
    receiver.answer(200);
    const second = await startTestServer(receiver.env, { dataUrl: path });
    try {
      const events = await receiver.waitFor(2);
      assert.deepEqual(events.map((e) => e.data.businessId), [first.businessId, first.businessId]);
    } finally {
      await second.close();
    }
  } finally {
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});
