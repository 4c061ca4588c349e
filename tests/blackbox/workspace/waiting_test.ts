// No silent dead ends: an approved run that nothing will carry out says so, to the owner on
// the approval page and to the agent in get_approval; with an event receiver, nothing waits.
import assert from "node:assert/strict";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { mainCommand, originsEnv, startTaskFlags, startup } from "../support/main_process.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";

const WAITS =
  "The run stays queued: no event receiver is configured, so nothing will run it until an operator sets VESTIBULE_WEBHOOK_URL.";
const WILL_WAIT =
  "Once approved, this will wait: no event receiver is configured, so nothing will run it until an operator sets VESTIBULE_WEBHOOK_URL.";

async function approvedRun(env: Record<string, string>) {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env, ...env });
  await ws.workspace.workflows.put(ws.businessId, {
    id: "wf-1",
    name: "Refund triage",
    description: "",
    kind: "paid",
    costPerRunCents: 40,
    status: "active",
    updatedAt: 0,
  });
  const { token } = await ws.token(["app.access", "workflows.run", "automation.request"]);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await ws.call(token, name, args)).message.result;
  const owner = await signIn(ws, outbox, "owner@example.com");
  const started = (await call("start_workflow", { workflowId: "wf-1" })).structuredContent;
  const pendingPage = await owner.get(started.approvalUrl);
  const pending = await call("get_approval", { gateId: started.gateId });
  const decided = await owner.post(started.approvalUrl, {
    csrf: hiddenField(pendingPage.text, "csrf"),
    decision: "approve",
  });
  assert.equal(decided.status, 303);
  return {
    ws,
    call,
    owner,
    started,
    pendingPage,
    pending,
    approved: await call("get_approval", { gateId: started.gateId }),
    approvedPage: await owner.get(started.approvalUrl),
  };
}

Deno.test("without an event receiver, an approved run says it waits and why", async (t) => {
  const run = await approvedRun({});
  try {
    await t.step("get_approval tells the agent, in the result and its text", () => {
      assert.equal(run.pending.structuredContent.waiting, WILL_WAIT);
      assert.equal(run.approved.structuredContent.status, "approved");
      assert.equal(run.approved.structuredContent.applied, true);
      assert.equal(run.approved.structuredContent.waiting, WAITS);
      assert.ok(JSON.stringify(run.approved.content).includes("nothing will run it"));
    });

    await t.step("the approval page tells the owner, before and after deciding", () => {
      for (const page of [run.pendingPage, run.approvedPage]) {
        assert.match(page.text, /<p[^>]* id="gate-waiting">/);
        assert.ok(page.text.includes("Nothing will carry this out yet."));
      }
      assert.ok(run.pendingPage.text.includes(WILL_WAIT));
      assert.ok(run.approvedPage.text.includes(WAITS));
    });

    await t.step("an action Vestibule carries out itself does not wait", async () => {
      const gate = (await run.call("request_automation_authority", {
        activities: { refunds: true },
        automaticActions: { enabled: false, maxPerDay: 0, maxAmountCents: 0 },
      })).structuredContent;
      assert.equal(typeof gate.gateId, "string", JSON.stringify(gate));
      const view = (await run.call("get_approval", { gateId: gate.gateId })).structuredContent;
      assert.equal(view.waiting, undefined);
      const page = await run.owner.get(gate.approvalUrl);
      assert.ok(!page.text.includes("gate-waiting"));
    });

    await t.step("start-up warned once, naming the actions that would wait", () => {
      const warnings = run.ws.server.logs.filter((line) => line.includes("no event receiver"));
      assert.equal(warnings.length, 1);
      const warning = JSON.parse(warnings[0]!);
      assert.equal(warning.level, "warn");
      assert.match(warning.message, /VESTIBULE_WEBHOOK_URL/);
      assert.match(warning.message, /workflow runs \(start_workflow\)/);
      assert.match(warning.message, /retries of external writes \(reconcile_effect\)/);
      assert.doesNotMatch(warning.message, /change_access|install_skill|call_upstream/);
    });
  } finally {
    await run.ws.close();
  }
});

Deno.test("with an event receiver, an approved run does not say it waits", async () => {
  const receiver = await startTestReceiver();
  const run = await approvedRun(receiver.env);
  try {
    assert.equal(run.pending.structuredContent.waiting, undefined);
    assert.equal(run.approved.structuredContent.applied, true);
    assert.equal(run.approved.structuredContent.waiting, undefined);
    assert.ok(!run.approvedPage.text.includes("gate-waiting"));
    assert.ok(!run.pendingPage.text.includes("gate-waiting"));
    assert.ok(!run.ws.server.logs.some((line) => line.includes("no event receiver")));
    await receiver.waitFor(2);
  } finally {
    await run.ws.close();
    await receiver.close();
  }
});

Deno.test("main.ts warns at start-up which approved actions would wait", async () => {
  const outcome = await startup(
    mainCommand(await startTaskFlags(), { ...originsEnv(), VESTIBULE_DATA: ":memory:" }),
  );
  assert.ok(outcome.listened, outcome.stderr);
  const warnings = outcome.stdout.split("\n").filter((line) => line.includes("no event receiver"));
  assert.equal(warnings.length, 1, outcome.stdout);
  assert.deepEqual(JSON.parse(warnings[0]!).level, "warn");
  assert.match(
    warnings[0]!,
    /approved workflow runs \(start_workflow\), new triggers \(create_trigger\), connection changes \(change_connection\), retries of external writes \(reconcile_effect\) are recorded but wait/,
  );
});
