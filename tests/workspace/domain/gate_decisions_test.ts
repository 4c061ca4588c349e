// Gate decisions that race each other or meet a failing store. Both are made deterministic
// with a wrapper around the real store: one holds chosen commits until every decision has
// read what it needs, the other fails every commit from the n-th on (a crash at that point).
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import type { Mutation, Store } from "../../../src/store/store.ts";
import type { GateAction } from "../../../src/workspace/domain/gate_actions.ts";
import type { DecideResult } from "../../../src/workspace/domain/gate_decisions.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { createFixture, type Fixture } from "../fixtures.ts";

/** The fixture's services over another store (a wrapper of the fixture's own). */
function servicesOver(f: Fixture, store: Store) {
  return createWorkspaceServices({
    store,
    now: f.now,
    accounts: createAccounts(store, f.now),
    mailer: f.mailer,
    authUrl: "http://auth.test",
  });
}

const _writesGate = (mutations: readonly Mutation[], gateId: string) =>
  mutations.some((m) => m.key[0] === "gate" && m.key[1] === gateId);

/**
 * The first commit that writes each of `gateIds` waits until all of them are waiting, then
 * they go through one after another in that order; so every decision has read the store
 * before any of them commits. Later commits (retries, deliveries) pass straight through.
 */
function interleaveDecisions(store: Store, gateIds: readonly string[]): Store {
  const arrived = gateIds.map(() => Promise.withResolvers<void>());
  const committed = gateIds.map(() => Promise.withResolvers<void>());
  const held = new Set<number>();
  return {
    ...store,
    async commit(checks, mutations) {
      const i = gateIds.findIndex((id) => _writesGate(mutations, id));
      if (i < 0 || held.has(i)) return await store.commit(checks, mutations);
      held.add(i);
      arrived[i]!.resolve();
      await Promise.all(arrived.map((a) => a.promise));
      if (i > 0) await committed[i - 1]!.promise;
      try {
        return await store.commit(checks, mutations);
      } finally {
        committed[i]!.resolve();
      }
    },
  };
}

/** Runs `meanwhile` just before the first commit that writes `gateId`: after its reads. */
function changeBeforeDecision(
  store: Store,
  gateId: string,
  meanwhile: () => Promise<unknown>,
): Store {
  let done = false;
  return {
    ...store,
    async commit(checks, mutations) {
      if (!done && _writesGate(mutations, gateId)) {
        done = true;
        await meanwhile();
      }
      return await store.commit(checks, mutations);
    },
  };
}

/** Commits number `failAt` (from 0) and later throw, as when the process dies there. */
function failingFrom(store: Store, failAt: number): Store {
  let count = 0;
  return {
    ...store,
    commit(checks, mutations) {
      if (count++ >= failAt) return Promise.reject(new Error("store unavailable"));
      return store.commit(checks, mutations);
    },
  };
}

async function members(f: Fixture): Promise<string[]> {
  return (await f.accounts.listMembers(f.businessId)).map((m) => `${m.account.email}:${m.role}`);
}

async function requestGate(f: Fixture, action: GateAction): Promise<string> {
  const result = await f.gates.request({
    businessId: f.businessId,
    accountId: f.memberId,
    clientId: "client-1",
    clientName: "Client One",
    tool: "test",
    scope: "app.access",
    action,
  });
  assert.ok(result.ok, JSON.stringify(result));
  return result.gate.id;
}

/** How a decision ended, in one comparable string. */
const _ending = (result: DecideResult) =>
  result.kind === "decided"
    ? `${result.gate.applied ? "applied" : "not applied"}: ${result.gate.outcome}`
    : result.kind;

const remove = (email: string): GateAction => ({
  type: "change_access",
  change: "remove",
  email,
  role: "member",
});
const demote = (email: string): GateAction => ({
  type: "change_access",
  change: "change_role",
  email,
  role: "member",
});
const invite = (email: string, role: "owner" | "member"): GateAction => ({
  type: "change_access",
  change: "invite",
  email,
  role,
});

Deno.test("concurrent decisions end as if made one after the other", async (t) => {
  // owner@ and member@ are both owners here; `by` names who decides each gate.
  const cases: {
    name: string;
    first: { action: GateAction; by: "owner" | "member" };
    second: { action: GateAction; by: "owner" | "member" };
    secondEnds: string;
    members: string[];
  }[] = [
    {
      name: "removing each of the last two owners: the second is not applied",
      first: { action: remove("member@example.com"), by: "owner" },
      second: { action: remove("owner@example.com"), by: "owner" },
      secondEnds:
        "not applied: Approved, but not applied: owner@example.com is the only owner; add another owner first",
      members: ["owner@example.com:owner"],
    },
    {
      name: "demoting each of the last two owners: the second is not applied",
      first: { action: demote("member@example.com"), by: "owner" },
      second: { action: demote("owner@example.com"), by: "owner" },
      secondEnds:
        "not applied: Approved, but not applied: owner@example.com is the only owner; add another owner first",
      members: ["member@example.com:member", "owner@example.com:owner"],
    },
    {
      name: "inviting one address twice: the second finds a member",
      first: { action: invite("new@example.com", "member"), by: "owner" },
      second: { action: invite("new@example.com", "owner"), by: "member" },
      secondEnds: "not applied: Approved, but not applied: new@example.com is already a member",
      members: ["member@example.com:owner", "new@example.com:member", "owner@example.com:owner"],
    },
    {
      name: "inviting one existing account twice: the second finds a member",
      first: { action: invite("elsewhere@example.com", "member"), by: "owner" },
      second: { action: invite("elsewhere@example.com", "owner"), by: "member" },
      secondEnds:
        "not applied: Approved, but not applied: elsewhere@example.com is already a member",
      members: [
        "elsewhere@example.com:member",
        "member@example.com:owner",
        "owner@example.com:owner",
      ],
    },
    {
      name: "an owner removed meanwhile can no longer decide",
      first: { action: remove("member@example.com"), by: "owner" },
      second: {
        action: {
          type: "install_skill",
          name: "Tone",
          description: "Kind",
          instructions: "Be kind.",
        },
        by: "member",
      },
      secondEnds: "forbidden",
      members: ["owner@example.com:owner"],
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const f = await createFixture();
      try {
        await f.accounts.createAccountWithBusiness("elsewhere@example.com", "Elsewhere");
        await f.accounts.addMember(f.businessId, "member@example.com", "owner");
        const first = await requestGate(f, c.first.action);
        const second = await requestGate(f, c.second.action);
        const { gates } = servicesOver(f, interleaveDecisions(f.workspace.store, [first, second]));
        const decider = { owner: f.ownerId, member: f.memberId };
        const [firstResult, secondResult] = await Promise.all([
          gates.decide(first, decider[c.first.by], "approve"),
          gates.decide(second, decider[c.second.by], "approve"),
        ]);
        assert.match(_ending(firstResult), /^applied: /);
        assert.equal(_ending(secondResult), c.secondEnds);
        assert.deepEqual(await members(f), c.members);
        assert.ok((await f.workspace.invitations.list(f.businessId)).length <= 1);
        assert.deepEqual(await f.workspace.skills.list(f.businessId), []);
        const decisions = (await f.audit.list(f.businessId)).filter((e) => e.actor === "human");
        assert.equal(decisions.length, c.secondEnds === "forbidden" ? 1 : 2, "each one audited");
      } finally {
        f.close();
      }
    });
  }
});

Deno.test("an invitation and a sign-up of one new address make one account", async () => {
  const f = await createFixture();
  try {
    const gateId = await requestGate(f, invite("new@example.com", "member"));
    const signUp = () => f.accounts.createAccountWithBusiness("new@example.com", "New Co");
    const store = changeBeforeDecision(f.workspace.store, gateId, signUp);
    const decided = await servicesOver(f, store).gates.decide(gateId, f.ownerId, "approve");
    assert.equal(_ending(decided), "applied: Invite new@example.com as a member");
    const account = await f.accounts.findAccountByEmail("new@example.com");
    assert.deepEqual(
      (await f.accounts.listBusinessesOf(account!.id)).map((b) => `${b.business.name}:${b.role}`),
      ["Acme:member", "New Co:owner"],
    );
  } finally {
    f.close();
  }
});

Deno.test("a refusal stands only while what it was read from is unchanged", async (t) => {
  // Each gate was requested while it applied, then made inapplicable; the change made back
  // between the decision's reads and its commit must turn the refusal into an approval.
  const workflow = {
    id: "wf",
    name: "Sync",
    description: "",
    kind: "internal",
    costPerRunCents: 0,
    status: "active",
    updatedAt: 0,
  } as const;
  const connection = {
    id: "conn",
    kind: "mailbox",
    service: "Mail",
    label: "orders@example.com",
    status: "connected",
    updatedAt: 0,
  } as const;
  const effect = {
    id: "eff",
    connectionId: "conn",
    description: "Tag order 1",
    status: "unknown",
    observedAt: 0,
  } as const;
  const cases: {
    name: string;
    action: GateAction;
    undo: (f: Fixture) => Promise<unknown>;
    redo: (f: Fixture) => Promise<unknown>;
  }[] = [
    {
      name: "start_workflow: the workflow resumed",
      action: { type: "start_workflow", workflowId: "wf" },
      undo: (f) => f.workspace.workflows.put(f.businessId, { ...workflow, status: "paused" }),
      redo: (f) => f.workspace.workflows.put(f.businessId, workflow),
    },
    {
      name: "create_trigger: the workflow created",
      action: {
        type: "create_trigger",
        name: "On order",
        event: "order.created",
        workflowId: "wf",
      },
      undo: (f) => f.workspace.store.delete(f.workspace.workflows.key(f.businessId, "wf")),
      redo: (f) => f.workspace.workflows.put(f.businessId, workflow),
    },
    {
      name: "change_connection: the connection created",
      action: {
        type: "change_connection",
        change: "disconnect",
        kind: "mailbox",
        connectionId: "conn",
        service: "Mail",
        label: "orders@example.com",
      },
      undo: (f) => f.workspace.store.delete(f.workspace.connections.key(f.businessId, "conn")),
      redo: (f) => f.workspace.connections.put(f.businessId, connection),
    },
    {
      name: "reconcile_effect: the write recorded",
      action: { type: "reconcile_effect", effectId: "eff", resolution: "applied" },
      undo: (f) => f.workspace.store.delete(f.workspace.effects.key(f.businessId, "eff")),
      redo: (f) => f.workspace.effects.put(f.businessId, effect),
    },
    {
      name: "change_access: another owner added",
      action: remove("owner@example.com"),
      undo: (f) => f.accounts.addMember(f.businessId, "member@example.com", "member"),
      redo: (f) => f.accounts.addMember(f.businessId, "member@example.com", "owner"),
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const f = await createFixture();
      try {
        await f.workspace.workflows.put(f.businessId, workflow);
        await f.workspace.connections.put(f.businessId, connection);
        await f.workspace.effects.put(f.businessId, effect);
        await f.accounts.addMember(f.businessId, "member@example.com", "owner");
        const gateId = await requestGate(f, c.action);
        await c.undo(f);
        const store = changeBeforeDecision(f.workspace.store, gateId, () => c.redo(f));
        const decided = await servicesOver(f, store).gates.decide(gateId, f.ownerId, "approve");
        assert.match(_ending(decided), /^applied: /);
      } finally {
        f.close();
      }
    });
  }
});

Deno.test("a store failing at any point of an access change leaves it whole or undone", async (t) => {
  const cases: {
    name: string;
    action: GateAction;
    before: string[];
    after: string[];
    invitations: number;
  }[] = [
    {
      name: "inviting a new address",
      action: invite("new@example.com", "member"),
      before: ["member@example.com:member", "owner@example.com:owner"],
      after: ["member@example.com:member", "new@example.com:member", "owner@example.com:owner"],
      invitations: 1,
    },
    {
      name: "inviting an existing account",
      action: invite("elsewhere@example.com", "owner"),
      before: ["member@example.com:member", "owner@example.com:owner"],
      after: [
        "elsewhere@example.com:owner",
        "member@example.com:member",
        "owner@example.com:owner",
      ],
      invitations: 1,
    },
    {
      name: "changing a role",
      action: demote("owner@example.com"),
      before: ["member@example.com:owner", "owner@example.com:owner"],
      after: ["member@example.com:owner", "owner@example.com:member"],
      invitations: 0,
    },
    {
      name: "removing a member",
      action: remove("member@example.com"),
      before: ["member@example.com:member", "owner@example.com:owner"],
      after: ["owner@example.com:owner"],
      invitations: 0,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      let crashes = 0;
      for (let failAt = 0;; failAt++) {
        const f = await createFixture();
        try {
          await f.accounts.createAccountWithBusiness("elsewhere@example.com", "Elsewhere");
          if (c.before.includes("member@example.com:owner")) {
            await f.accounts.addMember(f.businessId, "member@example.com", "owner");
          }
          assert.deepEqual(await members(f), c.before);
          const gateId = await requestGate(f, c.action);
          const { gates } = servicesOver(f, failingFrom(f.workspace.store, failAt));
          const crashed = await gates.decide(gateId, f.ownerId, "approve").then(
            () => false,
            (error) => (assert.equal(error.message, "store unavailable"), true),
          );

          const gate = await f.gates.get(gateId);
          const approvals = (await f.audit.list(f.businessId)).filter((e) =>
            e.action === "approve"
          );
          const invitations = (await f.workspace.invitations.list(f.businessId)).length;
          if (gate?.status === "pending") {
            assert.deepEqual([await members(f), invitations, approvals.length], [c.before, 0, 0]);
          } else {
            assert.deepEqual(
              [gate?.status, gate?.applied, await members(f), invitations, approvals.length],
              ["approved", true, c.after, c.invitations, 1],
              `failing from commit ${failAt}, the approval is recorded but not all applied`,
            );
          }
          // Nothing is stuck: approving again (the store back) completes what was not done.
          await f.gates.decide(gateId, f.ownerId, "approve");
          assert.deepEqual(await members(f), c.after);
          if (!crashed) break;
          crashes++;
        } finally {
          f.close();
        }
      }
      assert.ok(crashes >= 2, "the failure landed before and after the decision's commit");
    });
  }
});
