import assert from "node:assert/strict";
import type { GateAction } from "../../../src/workspace/domain/gate_actions.ts";
import { createFixture, type Fixture } from "../fixtures.ts";

/** Everything a gate could change, as one comparable snapshot. */
async function snapshot(f: Fixture) {
  const b = f.businessId;
  return JSON.stringify({
    runs: await f.workspace.runs.list(b),
    triggers: await f.workspace.triggers.list(b),
    connections: await f.workspace.connections.list(b),
    invitations: await f.workspace.invitations.list(b),
    skills: await f.workspace.skills.list(b),
    effects: await f.workspace.effects.list(b),
    automation: (await f.workspace.automation.get(b))?.value ?? null,
    subscription: (await f.workspace.subscription.get(b))?.value ?? null,
    members: (await f.accounts.listMembers(b)).map((m) => [m.account.email, m.role]),
  });
}

Deno.test("every gate action changes nothing until approved, then exactly what it said", async (t) => {
  const f = await createFixture();
  const b = f.businessId;
  await f.workspace.workflows.put(b, {
    id: "wf",
    name: "Sync",
    description: "",
    kind: "live",
    costPerRunCents: 0,
    status: "active",
    updatedAt: 0,
  });
  await f.workspace.connections.put(b, {
    id: "conn-mail",
    kind: "mailbox",
    service: "Mail",
    label: "orders@example.com",
    status: "needs_reconnect",
    updatedAt: 0,
  });
  await f.workspace.effects.put(b, {
    id: "eff",
    connectionId: "conn-mail",
    description: "Tag order 1",
    status: "unknown",
    observedAt: 0,
  });
  const cases: { action: GateAction; summary: string; check: () => Promise<void> }[] = [
    {
      action: { type: "start_workflow", workflowId: "wf" },
      summary: 'Start one run of the live workflow "Sync", acting on connected live systems',
      check: async () => assert.equal((await f.workspace.runs.list(b)).length, 1),
    },
    {
      action: {
        type: "create_trigger",
        name: "On order",
        event: "order.created",
        workflowId: "wf",
      },
      summary:
        'Create the enabled trigger "On order" that runs workflow "Sync" on every order.created event',
      check: async () => assert.equal((await f.workspace.triggers.list(b))[0]?.enabled, true),
    },
    {
      action: {
        type: "change_connection",
        change: "reconnect",
        kind: "mailbox",
        connectionId: "conn-mail",
        service: "Mail",
        label: "orders@example.com",
      },
      summary: "Reconnect the mailbox connection Mail (orders@example.com)",
      check: async () =>
        assert.equal(
          (await f.workspace.connections.get(b, "conn-mail"))?.value.status,
          "connected",
        ),
    },
    {
      action: {
        type: "change_connection",
        change: "connect",
        kind: "helpdesk",
        connectionId: null,
        service: "Helpdesk",
        label: "help.example.com",
      },
      summary: "Connect the helpdesk service Helpdesk as help.example.com",
      check: async () => assert.equal((await f.workspace.connections.list(b)).length, 2),
    },
    {
      action: {
        type: "change_access",
        change: "change_role",
        email: "member@example.com",
        role: "owner",
      },
      summary: "Change the role of member@example.com to owner",
      check: async () =>
        assert.equal((await f.accounts.getMembership(f.memberId, b))?.role, "owner"),
    },
    {
      action: {
        type: "grant_automation",
        activities: { refunds: true, restock: false },
        automaticActions: { enabled: true, maxPerDay: 5, maxAmountCents: 2_500 },
      },
      summary:
        "Set activity controls (enabled: refunds) and allow automatic actions, at most 5 a day and $25.00 each",
      check: async () =>
        assert.equal((await f.workspace.automation.get(b))?.value.automaticActions.maxPerDay, 5),
    },
    {
      action: {
        type: "install_skill",
        name: "Tone",
        description: "Polite replies",
        instructions: "Be kind.",
      },
      summary: 'Install the skill "Tone": Polite replies',
      check: async () =>
        assert.equal((await f.workspace.skills.list(b))[0]?.installedBy, f.ownerId),
    },
    {
      action: { type: "reconcile_effect", effectId: "eff", resolution: "not_applied" },
      summary: 'Record as not applied the external write "Tag order 1"',
      check: async () =>
        assert.equal((await f.workspace.effects.get(b, "eff"))?.value.status, "not_applied"),
    },
    {
      action: { type: "change_billing", plan: "starter", seats: 3, paymentMethod: null },
      summary:
        "Change the plan from none to starter, set seats from 0 to 3; the monthly price becomes $147.00",
      check: async () =>
        assert.deepEqual(
          [
            (await f.workspace.subscription.get(b))?.value.plan,
            (await f.workspace.subscription.get(b))?.value.status,
          ],
          ["starter", "active"],
        ),
    },
  ];
  try {
    for (const c of cases) {
      await t.step(c.action.type + ": " + c.summary, async () => {
        const result = await f.gates.request({
          businessId: b,
          accountId: f.memberId,
          clientId: "client-1",
          clientName: "Client One",
          tool: "test",
          scope: "app.access",
          action: c.action,
        });
        assert.ok(result.ok, JSON.stringify(result));
        assert.equal(result.gate.summary, c.summary);
        const before = await snapshot(f);
        f.clock.t += 1000;
        assert.equal(await snapshot(f), before, "a pending gate changes nothing");
        const decided = await f.gates.decide(result.gate.id, f.ownerId, "approve");
        assert.ok(decided.kind === "decided" && decided.gate.applied, JSON.stringify(decided));
        await c.check();
        const after = await snapshot(f);
        assert.equal(
          (await f.gates.decide(result.gate.id, f.ownerId, "approve")).kind,
          "already_decided",
        );
        assert.equal(await snapshot(f), after, "approving again changes nothing");
      });
    }
  } finally {
    f.close();
  }
});
