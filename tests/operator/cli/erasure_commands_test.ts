// list-accounts, list-businesses, remove-member, delete-account and delete-business on a real
// (in-memory) KV store, with the operator's actions in the audit log, and --help everywhere.
import { adminRunner, withStore } from "./admin_runner.ts";
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createSessions } from "../../../src/accounts/sessions.ts";
import { adminUsage } from "../../../src/operator/cli/commands.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { getGrant } from "../../../src/oauth/grants.ts";
import type { Store } from "../../../src/store/store.ts";
import { createEventOutbox, WEBHOOK_KIND } from "../../../src/events/event_outbox.ts";
import { createMailService } from "../../../src/mail/mail_outbox.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { countPendingGates } from "../../../src/workspace/domain/gate_record.ts";

const config = resolveConfig({ VESTIBULE_DATA: ":memory:" });
const now = Date.now;

/** Every key in the store, as text, for before/after comparisons. */
async function allKeys(store: Store): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of store.list([])) keys.push(JSON.stringify(entry.key));
  return keys;
}

function grant(store: Store, accountId: string, businessId: string, clientId = "client-a") {
  return issueGrant({ config, store, now }, {
    accountId,
    businessId,
    clientId,
    scopes: ["app.access"],
    refresh: true,
  });
}

Deno.test("--help on every command prints its usage and exits 0, touching nothing", async () => {
  await withStore(async (store, run) => {
    const names = [...adminUsage().matchAll(/^ {2}([a-z-]+)/gm)].map((m) => m[1]!);
    assert.ok(names.includes("delete-account") && names.includes("list-accounts"), names.join());
    for (const name of names) {
      const result = await run(name, "--help");
      assert.equal(result.code, 0, `${name}: ${result.err}`);
      assert.match(result.out, new RegExp(`^Usage: vestibule admin ${name}`), name);
    }
    assert.deepEqual(await allKeys(store), []);
  });
});

Deno.test("list-accounts and list-businesses list everything, one shape per business", async () => {
  await withStore(async (store, run) => {
    const accounts = createAccounts(store, now);
    const a = await accounts.createAccountWithBusiness("zed@example.com", "Zed Co");
    const b = await accounts.createAccountWithBusiness("amy@example.com", "Amy Co");
    await accounts.addMember(a.business.id, "amy@example.com", "member");
    const listed = JSON.parse((await run("list-accounts")).out);
    assert.deepEqual(
      listed.accounts.map((x: { account: { email: string }; businesses: unknown[] }) => [
        x.account.email,
        x.businesses.length,
      ]),
      [["amy@example.com", 2], ["zed@example.com", 1]],
    );
    const all = JSON.parse((await run("list-businesses")).out).businesses;
    assert.deepEqual(all.map((x: { business: { name: string } }) => x.business.name), [
      "Amy Co",
      "Zed Co",
    ]);
    const amys = JSON.parse((await run("list-businesses", "--email", "amy@example.com")).out)
      .businesses;
    // The same entries, whichever way they were found.
    assert.deepEqual(amys, all);
    assert.equal(b.business.name, "Amy Co");
  });
});

Deno.test("remove-member removes, revokes its grants there and audits it; never the last owner", async () => {
  await withStore(async (store, run) => {
    const accounts = createAccounts(store, now);
    const { account: owner, business } = await accounts.createAccountWithBusiness(
      "owner@example.com",
      "Shop",
    );
    const helper = await accounts.addMember(business.id, "helper@example.com", "member");
    const helperGrant = await grant(store, helper.accountId, business.id);

    const last = await run("remove-member", "--business", business.id, "--email", owner.email);
    assert.equal(last.code, 1);
    assert.match(last.err, /owner@example\.com is the only owner/);

    const removed = await run(
      "remove-member",
      "--business",
      business.id,
      "--email",
      "helper@example.com",
    );
    assert.equal(removed.code, 0, removed.err);
    assert.equal(JSON.parse(removed.out).revokedGrants, 1);
    assert.equal(await accounts.getMembership(helper.accountId, business.id), null);
    assert.equal(await getGrant(store, helperGrant.grantId), null);
    // Newest first: the grant it held there, then the membership.
    const log = await createAuditLog(store, now).list(business.id);
    assert.deepEqual(log.map((e) => [e.actor, e.action, e.accountId, e.clientId]), [
      ["operator", "remove-member", helper.accountId, "client-a"],
      ["operator", "remove-member", helper.accountId, null],
    ]);

    const again = await run("remove-member", "--business", business.id, "--email", "helper@x.co");
    assert.equal(again.code, 1);
    assert.match(again.err, /helper@x\.co is not a member of this business/);
  });
});

Deno.test("operator commands that change a business are in its audit log as the operator", async () => {
  await withStore(async (store, run) => {
    const created = JSON.parse(
      (await run("create-business", "--owner", "o@example.com", "--name", "Audited")).out,
    );
    const businessId = created.business.id;
    await run("add-member", "--business", businessId, "--email", "m@example.com");
    const g = await grant(store, created.account.id, businessId);
    assert.equal((await run("revoke-grant", "--grant", g.grantId)).code, 0);
    const log = await createAuditLog(store, now).list(businessId);
    assert.deepEqual(log.map((e) => `${e.actor}:${e.action}`).reverse(), [
      "operator:create-business",
      "operator:add-member",
      "operator:revoke-grant",
    ]);
    // The revocation's record to the byte, field order included.
    const { id: _id, at: _at, ...revoked } = log[0]!;
    assert.equal(
      JSON.stringify(revoked),
      JSON.stringify({
        businessId,
        accountId: created.account.id,
        actor: "operator",
        clientId: "client-a",
        action: "revoke-grant",
        summary: "revoked the access of client-a (client-a)",
        gateId: null,
      }),
    );
  });
});

Deno.test("delete-business deletes its memberships, grants, records, approvals, connection tests and audit log; accounts stay", async () => {
  await withStore(async (store, run) => {
    const accounts = createAccounts(store, now);
    const keep = await accounts.createAccountWithBusiness("keep@example.com", "Kept");
    const before = await allKeys(store);
    const { account, business } = await accounts.createAccountWithBusiness(
      "doomed@example.com",
      "Doomed",
    );
    await accounts.addMember(business.id, "keep@example.com", "member");
    await accounts.addMember(keep.business.id, "doomed@example.com", "member");
    const g = await grant(store, account.id, business.id);
    const kept = await grant(store, account.id, keep.business.id);
    // A record, a pending approval (with its audit entry) and a connection test.
    const mail = createMailService({
      store,
      now,
      transport: { send: () => Promise.resolve() },
      log: () => {},
    });
    const services = createWorkspaceServices({
      store,
      now,
      accounts,
      mailer: mail.mailer,
      events: createEventOutbox({ outbox: mail.outbox, sender: mail.sender, now }),
      authUrl: config.authUrl,
    });
    await services.workspace.workflows.put(business.id, {
      id: "wf-1",
      name: "Refunds",
      description: "",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const gate = await services.gates.request({
      businessId: business.id,
      accountId: account.id,
      clientId: "client-a",
      clientName: "Client A",
      tool: "start_workflow",
      scope: "workflows.run",
      action: { type: "start_workflow", workflowId: "wf-1" },
    });
    assert.ok(gate.ok);
    const owner = { businessId: business.id, clientId: "client-a", accountId: account.id };
    await services.connectionTests.start(owner, false);
    // Its events: one delivered, one waiting.
    for (const type of ["trigger.disabled", "pack.configured"]) {
      const recorded = await services.events.record(business.id, [
        { type, data: { businessId: business.id } },
      ]);
      assert.ok(await store.commit(recorded.checks, recorded.mutations));
    }
    // The first event in its queue (the gate's mail to the owner is in the outbox too); the
    // listing keeps a queue's order even for events recorded within one millisecond.
    const delivered = (await mail.outbox.list()).find((d) => d.kind === WEBHOOK_KIND);
    await mail.outbox.finish((await mail.outbox.claim(delivered!.id))!, { kind: "sent" });

    const result = await run("delete-business", "--business", business.id);
    assert.equal(result.code, 0, result.err);
    const out = JSON.parse(result.out);
    assert.equal(out.members, 2);
    assert.equal(out.revokedGrants, 1);
    assert.equal(await accounts.getBusiness(business.id), null);
    assert.equal(await getGrant(store, g.grantId), null);
    assert.ok(await getGrant(store, kept.grantId), "a grant in another business stays");
    assert.ok(await accounts.findAccountByEmail("doomed@example.com"), "the account stays");
    const left = (await allKeys(store)).filter((k) => k.includes(business.id));
    assert.deepEqual(left, [], "nothing of the business is left");
    assert.equal(await services.gates.get(gate.gate.id), null);
    assert.equal(await countPendingGates(store), 0, "its approvals no longer wait");
    assert.deepEqual(await services.connectionTests.statuses(business.id), []);
    const attempts: string[] = [];
    for await (const entry of store.list(["conntest"])) attempts.push(String(entry.key));
    assert.deepEqual(attempts, []);
    // Mail went to people, whose accounts stay; the business's events go with it.
    const events = (await mail.outbox.list()).filter((d) => d.kind === WEBHOOK_KIND);
    assert.deepEqual(events, [], "its events, sent or not");
    assert.equal((await run("delete-business", "--business", business.id)).code, 1);
    const after = await allKeys(store);
    assert.ok(before.every((k) => after.includes(k)), "the other business is untouched");
  });
});

Deno.test("delete-account: its own businesses go, it leaves shared ones (audited), grants and sessions end", async () => {
  await withStore(async (store, run) => {
    const accounts = createAccounts(store, now);
    const { account, business: own } = await accounts.createAccountWithBusiness(
      "leaving@example.com",
      "Solo",
    );
    const shared = await accounts.createAccountWithBusiness("boss@example.com", "Shared");
    await accounts.addMember(shared.business.id, "leaving@example.com", "member");
    const ownGrant = await grant(store, account.id, own.id);
    const sharedGrant = await grant(store, account.id, shared.business.id);
    const bossGrant = await grant(store, shared.account.id, shared.business.id);
    const sessions = createSessions({ config, store, now, accounts });
    const signedIn = await sessions.start(account.id);
    assert.ok(signedIn);

    const result = await run("delete-account", "--email", "Leaving@Example.com");
    assert.equal(result.code, 0, result.err);
    const out = JSON.parse(result.out);
    assert.deepEqual(
      out.deletedBusinesses.map((d: { business: { id: string } }) => d.business.id),
      [
        own.id,
      ],
    );
    assert.deepEqual(out.leftBusinesses, [shared.business.id]);
    assert.equal(out.revokedGrants + out.deletedBusinesses[0].revokedGrants, 2);
    assert.equal(out.endedSessions, 1);
    assert.equal(await accounts.findAccountByEmail("leaving@example.com"), null);
    assert.equal(await accounts.getAccount(account.id), null);
    assert.equal(await accounts.getBusiness(own.id), null);
    assert.equal(await getGrant(store, ownGrant.grantId), null);
    assert.equal(await getGrant(store, sharedGrant.grantId), null);
    assert.ok(await getGrant(store, bossGrant.grantId));
    assert.deepEqual(
      (await accounts.listMembers(shared.business.id)).map((m) => m.account.email),
      ["boss@example.com"],
    );
    const [entry] = await createAuditLog(store, now).list(shared.business.id);
    assert.deepEqual([entry?.actor, entry?.action, entry?.accountId], [
      "operator",
      "delete-account",
      account.id,
    ]);
    const left = (await allKeys(store)).filter((k) => k.includes(account.id));
    assert.deepEqual(left, [], "nothing keyed by the account is left");
    const refreshGrants: string[] = [];
    for await (const entry of store.list<{ gid: string }>(["oauth", "refresh"])) {
      refreshGrants.push(entry.value.gid);
    }
    assert.deepEqual(refreshGrants, [bossGrant.grantId], "only the boss's refresh token is left");
  });
});

Deno.test("delete-account refuses the only owner of a business with other members, changing nothing", async () => {
  await withStore(async (store, run) => {
    const accounts = createAccounts(store, now);
    const { account, business } = await accounts.createAccountWithBusiness(
      "owner@example.com",
      "Team",
    );
    await accounts.addMember(business.id, "member@example.com", "member");
    await grant(store, account.id, business.id);
    const before = await allKeys(store);
    const result = await run("delete-account", "--email", "owner@example.com");
    assert.equal(result.code, 1);
    assert.match(
      result.err,
      /owner@example\.com is the only owner of business "[^"]+" \(Team\), which has other members: add another owner \(add-member --role owner\) or delete that business \(delete-business\) first/,
    );
    assert.deepEqual(await allKeys(store), before);
    // With a second owner it goes through.
    await accounts.addMember(business.id, "member@example.com", "owner");
    assert.equal((await run("delete-account", "--email", "owner@example.com")).code, 0);
  });
});

Deno.test("operator-log: deletions and key rotations, newest first, by id and never by e-mail or name", async () => {
  await withStore(async (store) => {
    // A clock a second further at each reading, so the order of the entries is the test's.
    let clock = Date.parse("2026-11-23T08:00:00Z");
    const run = adminRunner(store, { now: () => (clock += 1000) });
    const accounts = createAccounts(store, now);
    const gone = await accounts.createAccountWithBusiness("gone@example.com", "Gone Ltd");
    const solo = await accounts.createAccountWithBusiness("solo@example.com", "Solo Ltd");
    assert.equal((await run("delete-business", "--business", gone.business.id)).code, 0);
    assert.equal((await run("delete-account", "--email", "solo@example.com")).code, 0);
    const rotated = await run("rotate-signing-key");
    assert.equal(rotated.code, 0, rotated.err);

    const result = await run("operator-log", "--limit", "10");
    assert.equal(result.code, 0, result.err);
    const { entries } = JSON.parse(result.out);
    assert.deepEqual(
      entries.map((e: { command: string; summary: string }) => [e.command, e.summary]),
      [
        ["rotate-signing-key", `new signing key ${JSON.parse(rotated.out).kid}`],
        [
          "delete-account",
          `deleted account ${solo.account.id} and its businesses ${solo.business.id}`,
        ],
        ["delete-business", `deleted business ${gone.business.id}`],
      ],
    );
    assert.doesNotMatch(result.out, /@example\.com|Gone Ltd|Solo Ltd/);
    assert.equal((await run("operator-log", "--limit", "1")).out.match(/"command"/g)?.length, 1);
  });
});
