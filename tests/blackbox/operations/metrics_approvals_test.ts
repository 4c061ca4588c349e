// vestibule_approvals_pending follows real traffic: a gated call adds one, a decision on the
// approval page removes it.
import assert from "node:assert/strict";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test("metrics: approvals pending rise with gated calls and fall with decisions", async () => {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ ...adminEnv(), VESTIBULE_MAIL: outbox.env });
  const pending = async () =>
    sample(await scrape(ws.server.adminUrl), "vestibule_approvals_pending");
  try {
    await ws.workspace.workflows.put(ws.businessId, {
      id: "wf-1",
      name: "Refund triage",
      description: "",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const { token } = await ws.token(["app.access", "workflows.run"]);
    assert.equal(await pending(), 0);
    const gates = [];
    for (let i = 0; i < 2; i++) {
      const { status, message } = await ws.call(token, "start_workflow", { workflowId: "wf-1" });
      assert.equal(status, 200);
      gates.push(message.result.structuredContent);
    }
    assert.equal(await pending(), 2);
    const owner = await signIn(ws, outbox, "owner@example.com");
    const page = await owner.get(gates[0].approvalUrl);
    const decided = await owner.post(gates[0].approvalUrl, {
      csrf: hiddenField(page.text, "csrf"),
      decision: "decline",
    });
    assert.equal(decided.status, 303);
    assert.equal(await pending(), 1);
  } finally {
    await ws.close();
  }
});
