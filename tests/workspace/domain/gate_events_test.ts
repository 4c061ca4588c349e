// Events of gate decisions: recorded in the decision's own commit, so an event exists exactly
// when its change does (docs/integrating.md "Events").
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createEventOutbox } from "../../../src/events/event_outbox.ts";
import { createMailService } from "../../../src/mail/mail_outbox.ts";
import type { Store } from "../../../src/store/store.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { createFixture, type Fixture } from "../fixtures.ts";

/** The fixture's business with events recorded in the outbox over `store`. */
function withEvents(f: Fixture, store: Store) {
  const mail = createMailService({
    store,
    now: f.now,
    transport: { send: () => Promise.resolve() },
    log: () => {},
  });
  const services = createWorkspaceServices({
    store,
    now: f.now,
    accounts: createAccounts(store, f.now),
    mailer: mail.mailer,
    events: createEventOutbox({ outbox: mail.outbox, sender: mail.sender, now: f.now }),
    authUrl: "http://auth.test",
  });
  const recorded = async () =>
    (await mail.outbox.list()).filter((d) => d.kind === "webhook").map((d) => ({
      ...JSON.parse((d.payload as { body: string }).body),
      sequence: d.queue?.sequence,
    }));
  return { services, recorded };
}

Deno.test("an approval records approval.decided and its change's event; a decline only the first", async () => {
  const f = await createFixture();
  try {
    const { services, recorded } = withEvents(f, f.workspace.store);
    await f.workspace.workflows.put(f.businessId, {
      id: "wf-1",
      name: "Refund triage",
      description: "",
      kind: "internal",
      costPerRunCents: 0,
      status: "active",
      updatedAt: 0,
    });
    const request = {
      businessId: f.businessId,
      accountId: f.memberId,
      clientId: "c1",
      clientName: "Claude",
      tool: "start_workflow",
      scope: "workflows.run",
      action: { type: "start_workflow", workflowId: "wf-1" },
    } as const;
    const approved = await services.gates.request(request);
    const declined = await services.gates.request(request);
    assert.ok(approved.ok && declined.ok);
    assert.deepEqual(await recorded(), [], "a request alone changes nothing");
    await services.gates.decide(approved.gate.id, f.ownerId, "approve");
    await services.gates.decide(declined.gate.id, f.ownerId, "decline");
    const [run] = await f.workspace.runs.list(f.businessId);
    const events = (await recorded()).sort((a, b) => a.sequence - b.sequence);
    assert.deepEqual(events.map((e) => [e.sequence, e.type, e.data.gateId]), [
      [0, "approval.decided", approved.gate.id],
      [1, "workflow_run.requested", approved.gate.id],
      [2, "approval.decided", declined.gate.id],
    ]);
    assert.equal(events[1].data.runId, run!.id);
    assert.equal(events[2].data.decision, "declined");
    assert.deepEqual(
      [events[0].data.decidedBy, events[0].data.requestedBy, events[0].data.clientName],
      [f.ownerId, f.memberId, "Claude"],
    );
  } finally {
    f.close();
  }
});

Deno.test("a decision whose commit fails records no event; the decision made again records them once", async () => {
  const f = await createFixture();
  try {
    const store = f.workspace.store;
    let armed = false;
    let failed = false;
    const flaky: Store = {
      ...store,
      commit(checks, mutations) {
        // The first decision commit fails as if another writer had changed what it read.
        if (armed && !failed && mutations.some((m) => m.key[0] === "gate")) {
          failed = true;
          return Promise.resolve(false);
        }
        return store.commit(checks, mutations);
      },
    };
    const { services, recorded } = withEvents(f, flaky);
    const gate = await services.gates.request({
      businessId: f.businessId,
      accountId: f.ownerId,
      clientId: "c1",
      clientName: "Claude",
      tool: "install_skill",
      scope: "skills.install",
      action: {
        type: "install_skill",
        name: "Tone",
        description: "Polite",
        instructions: "Be kind",
      },
    });
    assert.ok(gate.ok);
    armed = true;
    assert.equal((await services.gates.decide(gate.gate.id, f.ownerId, "approve")).kind, "decided");
    assert.ok(failed);
    const events = (await recorded()).sort((a, b) => a.sequence - b.sequence);
    assert.deepEqual(events.map((e) => [e.sequence, e.type]), [
      [0, "approval.decided"],
      [1, "skill.install_approved"],
    ]);
    const [skill] = await f.workspace.skills.list(f.businessId);
    assert.equal(events[1].data.skillId, skill!.id);
  } finally {
    f.close();
  }
});
