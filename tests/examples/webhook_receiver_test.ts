// The reference integration (examples/webhook_receiver.ts) end to end, as its own process:
// Vestibule's signed events in, the configured command run, the run's status reported back
// through the operator API, and what the agent then reads.
import assert from "node:assert/strict";
import { Webhook } from "npm:standardwebhooks@^1.1.1";
import { hiddenField, tempOutbox } from "../blackbox/support/accounts_browser.ts";
import { signIn, startWorkspaceServer } from "../blackbox/support/workspace_support.ts";
import { createOutbox } from "../../src/outbox/outbox.ts";
import { integration } from "./example_receiver.ts";

const WORKFLOW = {
  id: "wf-refunds",
  name: "Refund triage",
  description: "Sorts refund requests",
  kind: "paid",
  costPerRunCents: 40,
  status: "active",
  updatedAt: 0,
} as const;

Deno.test("the example receiver, down for a while, gets every event once back, in order, and runs each approved run once", async () => {
  const shared = await integration();
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env, ...shared.serverEnv });
  let example;
  try {
    await ws.workspace.workflows.put(ws.businessId, WORKFLOW);
    const { token } = await ws.token(["app.access", "workflows.run"]);
    const owner = await signIn(ws, outbox, "owner@example.com");
    const gates: string[] = [];
    for (let i = 0; i < 2; i++) {
      const started = await ws.call(token, "start_workflow", { workflowId: WORKFLOW.id });
      const pending = started.message.result.structuredContent;
      const page = await owner.get(pending.approvalUrl);
      const csrf = hiddenField(page.text, "csrf");
      assert.equal(
        (await owner.post(pending.approvalUrl, { csrf, decision: "approve" })).status,
        303,
      );
      gates.push(pending.gateId);
    }
    // The receiver is not running: the first event's first attempt fails, the rest wait.
    const deliveries = createOutbox({ store: ws.server.store, now: Date.now });
    for (;;) {
      const events = (await deliveries.list()).filter((d) => d.kind === "webhook");
      if (events.some((d) => d.attempts > 0 && d.state === "pending")) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    example = await shared.start();
    const runs = (await ws.workspace.runs.list(ws.businessId)).map((r) => r.id);
    for (const runId of runs) {
      await example.waitFor(
        `run ${runId} succeeded`,
        (l) => l.run === runId && l.status === "succeeded",
      );
    }
    const received = example.lines.filter((l) => "received" in l);
    assert.deepEqual(received.map((l) => l.type), [
      "approval.decided",
      "workflow_run.requested",
      "approval.decided",
      "workflow_run.requested",
    ]);
    assert.equal(new Set(received.map((l) => l.received)).size, 4, "each event once");
    assert.deepEqual((await shared.runs()).sort(), runs.sort(), "each run carried out once");
    for (const runId of runs) {
      const run = (await ws.workspace.runs.get(ws.businessId, runId))!.value;
      assert.equal(run.status, "succeeded");
      assert.equal(run.result, `refunds triaged by ${WORKFLOW.id}`);
    }
    for (const runId of runs) {
      // Runs are carried out after the answer, so two may overlap; each reports in its order.
      assert.deepEqual(
        example.lines.filter((l) => l.run === runId).map((l) => [l.status, l.answer]),
        [["running", 200], ["succeeded", 200]],
      );
    }
  } finally {
    await example?.stop();
    await ws.close();
    await shared.remove();
  }
});

Deno.test("the example receiver refuses a forged signature and an old timestamp, and does a replayed id once", async () => {
  const shared = await integration();
  const example = await shared.start();
  const post = (headers: Record<string, string>, body: string) =>
    fetch(example.url, { method: "POST", headers, body }).then(async (r) => {
      await r.body?.cancel();
      return r.status;
    });
  try {
    const body = JSON.stringify({
      type: "workflow_run.requested",
      timestamp: new Date().toISOString(),
      data: { businessId: "b1", runId: "r1", workflowId: WORKFLOW.id },
    });
    const forger = new Webhook(`whsec_${btoa("not the operator's secret, 32 b")}`);
    const forged = _headers("msg_forged", forger.sign("msg_forged", new Date(), body), Date.now());
    assert.equal(await post(forged, body), 401);
    const signer = new Webhook(shared.secret);
    const old = signer.sign("msg_old", new Date(Date.now() - 10 * 60_000), body);
    assert.equal(await post(_headers("msg_old", old, Date.now() - 10 * 60_000), body), 401);
    const tampered = _headers("msg_1", signer.sign("msg_1", new Date(), body), Date.now());
    assert.equal(await post(tampered, body.replace("r1", "r2")), 401);
    assert.deepEqual(example.lines.filter((l) => "refused" in l).length, 3);

    const fresh = _headers("msg_1", signer.sign("msg_1", new Date(), body), Date.now());
    assert.equal(await post(fresh, body), 204);
    assert.equal(await post(fresh, body), 204, "acknowledged again");
    await example.waitFor("the run's last report", (l) => l.run === "r1" && l.status !== "running");
    assert.deepEqual(example.lines.filter((l) => "duplicate" in l), [{ duplicate: "msg_1" }]);
    assert.deepEqual(await shared.runs(), ["r1"], "the command ran once");
  } finally {
    await example.stop();
    await shared.remove();
  }
});

/** The three Standard Webhooks headers of a message signed as `signature` at `at`. */
function _headers(id: string, signature: string, at: number): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": signature,
  };
}
