import assert from "node:assert/strict";
import { createFixture } from "../fixtures.ts";

Deno.test("gates", async (t) => {
  const f = await createFixture();
  const b = f.businessId;
  await f.workspace.workflows.put(b, {
    id: "wf-1",
    name: "Refunds",
    description: "",
    kind: "paid",
    costPerRunCents: 40,
    status: "active",
    updatedAt: 0,
  });
  const request = () =>
    f.gates.request({
      businessId: b,
      accountId: f.memberId,
      clientId: "client-1",
      clientName: "Client One",
      tool: "start_workflow",
      scope: "workflows.run",
      action: { type: "start_workflow", workflowId: "wf-1" },
    });

  try {
    await t.step("a request records a pending gate and changes nothing", async () => {
      const result = await request();
      assert.ok(result.ok);
      assert.equal(result.gate.status, "pending");
      assert.equal(
        result.gate.summary,
        'Start one run of the paid workflow "Refunds", billed $0.40',
      );
      assert.equal(
        f.gates.approvalUrl(result.gate.id),
        `http://auth.test/approvals/${result.gate.id}`,
      );
      assert.deepEqual(await f.workspace.runs.list(b), []);
      const [entry] = await f.audit.list(b);
      assert.equal(entry?.actor, "agent");
      assert.equal(entry?.gateId, result.gate.id);
      const asked = f.sent.filter((m) => m.link === f.gates.approvalUrl(result.gate.id));
      assert.deepEqual(asked.map((m) => m.to), ["owner@example.com"], "every owner, no member");
      assert.equal(
        asked[0]!.subject,
        'Approval needed in Acme: Start one run of the paid workflow "Refunds", billed $0.40',
      );
      assert.equal(
        asked[0]!.text.split("\n")[0],
        'member@example.com\'s agent "Client One" asks for your approval in "Acme"',
      );
      assert.match(asked[0]!.text, /because you are an owner of "Acme"/);
    });

    await t.step("a request that cannot apply is refused with the reason", async () => {
      const result = await f.gates.request({
        businessId: b,
        accountId: f.memberId,
        clientId: "client-1",
        clientName: "Client One",
        tool: "start_workflow",
        scope: "workflows.run",
        action: { type: "start_workflow", workflowId: "nope" },
      });
      assert.deepEqual(result, { ok: false, reason: "No workflow nope" });
    });

    await t.step("a member who is not an owner cannot decide", async () => {
      const result = await request();
      assert.ok(result.ok);
      const decided = await f.gates.decide(result.gate.id, f.memberId, "approve");
      assert.equal(decided.kind, "forbidden");
      assert.equal((await f.gates.get(result.gate.id))?.status, "pending");
      assert.deepEqual(await f.workspace.runs.list(b), []);
    });

    await t.step("approving twice, even concurrently, applies the change once", async () => {
      const result = await request();
      assert.ok(result.ok);
      const outcomes = await Promise.all([
        f.gates.decide(result.gate.id, f.ownerId, "approve"),
        f.gates.decide(result.gate.id, f.ownerId, "approve"),
      ]);
      assert.deepEqual(outcomes.map((o) => o.kind).sort(), ["already_decided", "decided"]);
      const again = await f.gates.decide(result.gate.id, f.ownerId, "approve");
      assert.equal(again.kind, "already_decided");
      const runs = await f.workspace.runs.list(b);
      assert.equal(runs.length, 1);
      assert.equal(runs[0]?.gateId, result.gate.id);
      assert.equal(runs[0]?.approvedBy, f.ownerId);
      assert.equal((await f.workspace.subscription.get(b))?.value.usage.runs, 1);
      const gate = await f.gates.get(result.gate.id);
      assert.equal(gate?.status, "approved");
      assert.equal(gate?.applied, true);
      assert.equal(gate?.deliveries, 1);
      assert.equal(gate?.lastDelivery, "e-mailed to member@example.com");
      // Human words: the business and the approval's own summary (name and cost), no tool id.
      const decided = f.sent.at(-1)!;
      assert.equal(
        decided.subject,
        'Approved in Acme: Start one run of the paid workflow "Refunds", billed $0.40',
      );
      assert.equal(
        decided.text.split("\n")[0],
        'An owner approved what your agent "Client One" asked for in "Acme"',
      );
    });

    await t.step("declining changes nothing and is logged as a human decision", async () => {
      const before = (await f.workspace.runs.list(b)).length;
      const result = await request();
      assert.ok(result.ok);
      const decided = await f.gates.decide(result.gate.id, f.ownerId, "decline");
      assert.equal(decided.kind, "decided");
      assert.equal((await f.workspace.runs.list(b)).length, before);
      const [entry] = await f.audit.list(b);
      assert.equal(entry?.actor, "human");
      assert.equal(entry?.action, "decline");
      assert.equal(entry?.accountId, f.ownerId);
      assert.equal(entry?.clientId, "client-1");
    });

    await t.step("redelivery resends a decision and refuses a pending gate", async () => {
      const pending = await request();
      assert.ok(pending.ok);
      assert.equal(await f.gates.redeliver(pending.gate), null);
      await f.gates.decide(pending.gate.id, f.ownerId, "decline");
      const sentBefore = f.sent.length;
      const redelivered = await f.gates.redeliver((await f.gates.get(pending.gate.id))!);
      assert.equal(redelivered?.deliveries, 2);
      assert.equal(f.sent.length, sentBefore + 1);
    });

    await t.step("an approval that no longer applies changes nothing and says why", async () => {
      const result = await request();
      assert.ok(result.ok);
      await f.workspace.workflows.put(b, {
        id: "wf-1",
        name: "Refunds",
        description: "",
        kind: "paid",
        costPerRunCents: 40,
        status: "paused",
        updatedAt: 0,
      });
      const before = (await f.workspace.runs.list(b)).length;
      const decided = await f.gates.decide(result.gate.id, f.ownerId, "approve");
      assert.equal(decided.kind, "decided");
      assert.equal(decided.kind === "decided" && decided.gate.applied, false);
      assert.equal(
        decided.kind === "decided" && decided.gate.outcome,
        "Approved, but not applied: Workflow Refunds is paused",
      );
      assert.equal((await f.workspace.runs.list(b)).length, before);
    });

    await t.step("an access change is applied through the accounts on approval", async () => {
      const result = await f.gates.request({
        businessId: b,
        accountId: f.memberId,
        clientId: "client-1",
        clientName: "Client One",
        tool: "request_access_change",
        scope: "members.request",
        action: {
          type: "change_access",
          change: "invite",
          email: "new@example.com",
          role: "member",
        },
      });
      assert.ok(result.ok);
      assert.equal(result.gate.summary, "Invite new@example.com as a member");
      assert.equal((await f.accounts.listMembers(b)).length, 2);
      await f.gates.decide(result.gate.id, f.ownerId, "approve");
      const members = await f.accounts.listMembers(b);
      assert.deepEqual(members.map((m) => m.account.email), [
        "member@example.com",
        "new@example.com",
        "owner@example.com",
      ]);
      assert.equal((await f.workspace.invitations.list(b)).length, 1);
    });

    await t.step("removing the only owner is refused before a gate is made", async () => {
      const result = await f.gates.request({
        businessId: b,
        accountId: f.memberId,
        clientId: "client-1",
        clientName: "Client One",
        tool: "request_access_change",
        scope: "members.request",
        action: {
          type: "change_access",
          change: "remove",
          email: "owner@example.com",
          role: "owner",
        },
      });
      assert.deepEqual(result, {
        ok: false,
        reason: "owner@example.com is the only owner; add another owner first",
      });
    });

    await t.step("gates are listed newest first, within one millisecond too", async () => {
      const workflow = (await f.workspace.workflows.get(b, "wf-1"))!.value;
      await f.workspace.workflows.put(b, { ...workflow, status: "active" });
      const result = await request();
      assert.ok(result.ok);
      const [first] = await f.gates.list(b);
      assert.equal(first?.id, result.gate.id);
    });
  } finally {
    f.close();
  }
});

Deno.test("a decision notice the mail server has not taken yet is reported as queued, not e-mailed", async () => {
  const f = await createFixture({
    transport: { send: () => Promise.reject(new Error("the mail server is busy")) },
  });
  try {
    const b = f.businessId;
    await f.workspace.workflows.put(b, {
      id: "wf-1",
      name: "Refunds",
      description: "",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const result = await f.gates.request({
      businessId: b,
      accountId: f.memberId,
      clientId: "client-1",
      clientName: "Client One",
      tool: "start_workflow",
      scope: "workflows.run",
      action: { type: "start_workflow", workflowId: "wf-1" },
    });
    assert.ok(result.ok);
    await f.gates.decide(result.gate.id, f.ownerId, "approve");
    const gate = await f.gates.get(result.gate.id);
    assert.equal(
      gate?.lastDelivery,
      "queued for member@example.com: not sent yet, the outbox retries it",
    );
  } finally {
    f.close();
  }
});
