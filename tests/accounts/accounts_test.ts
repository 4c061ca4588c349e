import assert from "node:assert/strict";
import { AccountsError, createAccounts } from "../../src/accounts/accounts.ts";
import { openKvStore } from "../../src/store/kv_store.ts";

Deno.test("accounts, businesses and memberships", async (t) => {
  const store = await openKvStore(":memory:");
  const accounts = createAccounts(store, () => 1_800_000_000_000);
  try {
    await t.step("a new e-mail gets an account owning a new business", async () => {
      const { account, business } = await accounts.createAccountWithBusiness(
        " Ada@Example.COM ",
        "  Engines Ltd ",
      );
      assert.equal(account.email, "ada@example.com");
      assert.equal(account.name, "ada");
      assert.equal(business.name, "Engines Ltd");
      assert.deepEqual(await accounts.getMembership(account.id, business.id), {
        accountId: account.id,
        businessId: business.id,
        role: "owner",
      });
      assert.deepEqual(await accounts.findAccountByEmail("ADA@example.com"), account);
    });

    await t.step("the same e-mail again adds a business to the same account", async () => {
      const again = await accounts.createAccountWithBusiness("ada@example.com", "Analytical Co");
      const ada = (await accounts.findAccountByEmail("ada@example.com"))!;
      assert.equal(again.account.id, ada.id);
      assert.deepEqual(
        (await accounts.listBusinessesOf(ada.id)).map((b) => `${b.business.name}:${b.role}`),
        ["Analytical Co:owner", "Engines Ltd:owner"],
      );
    });

    await t.step("concurrent sign-ups of one new e-mail make one account", async () => {
      const results = await Promise.all(
        Array.from(
          { length: 10 },
          (_, i) => accounts.createAccountWithBusiness("race@example.com", `B${i}`),
        ),
      );
      assert.equal(new Set(results.map((r) => r.account.id)).size, 1);
      const race = (await accounts.findAccountByEmail("race@example.com"))!;
      assert.equal((await accounts.listBusinessesOf(race.id)).length, 10, "no business lost");
    });

    await t.step("members: add (creating the account), change role, list, remove", async () => {
      const ada = (await accounts.findAccountByEmail("ada@example.com"))!;
      const business = (await accounts.listBusinessesOf(ada.id))[0]!.business;
      const added = await accounts.addMember(business.id, "Bob@example.com", "member");
      const bob = (await accounts.findAccountByEmail("bob@example.com"))!;
      assert.equal(added.accountId, bob.id);
      assert.deepEqual(
        (await accounts.listMembers(business.id)).map((m) => `${m.account.email}:${m.role}`),
        ["ada@example.com:owner", "bob@example.com:member"],
      );
      await accounts.addMember(business.id, "bob@example.com", "owner");
      assert.equal((await accounts.getMembership(bob.id, business.id))?.role, "owner");
      await accounts.removeMember(business.id, bob.id);
      assert.equal(await accounts.getMembership(bob.id, business.id), null);
      assert.deepEqual(await accounts.listBusinessesOf(bob.id), []);
      await assert.rejects(
        () => accounts.addMember("no-such-business", "x@example.com", "member"),
        (error) =>
          error instanceof AccountsError &&
          /No business with id "no-such-business"/.test(error.message),
      );
      await assert.rejects(() => accounts.createBusiness("no-such-account", "X"), AccountsError);
    });

    await t.step("a membership plan goes stale when the business's members change", async () => {
      const { business } = await accounts.createAccountWithBusiness("dora@example.com", "Dora");
      const { business: other } = await accounts.createAccountWithBusiness(
        "eve@example.com",
        "E",
      );
      await accounts.addMember(business.id, "fay@example.com", "owner");
      const plan = () =>
        accounts.planMembershipChange(business.id, {
          change: "remove",
          email: "fay@example.com",
          role: "member",
        });
      const stale = await plan();
      assert.ok(stale.ok);
      await accounts.addMember(business.id, "gus@example.com", "member");
      assert.equal(await store.commit(stale.checks, stale.mutations), false);
      const current = await plan();
      assert.ok(current.ok);
      await accounts.addMember(other.id, "gus@example.com", "member");
      assert.equal(await store.commit(current.checks, current.mutations), true, "other business");
      const after = await plan();
      assert.equal(!after.ok && after.reason, "fay@example.com is not a member of this business");
    });

    await t.step(
      "planRename renames once committed, and answers null for an unknown id",
      async () => {
        const { business } = await accounts.createAccountWithBusiness("carol@example.com", "Old");
        const plan = (await accounts.planRename(business.id, " New "))!;
        assert.equal(plan.renamed.name, "New");
        assert.equal(plan.before.name, "Old");
        assert.ok(await store.commit([plan.check], [plan.mutation]));
        assert.equal((await accounts.getBusiness(business.id))?.name, "New");
        assert.equal(await store.commit([plan.check], [plan.mutation]), false, "read before");
        assert.equal(await accounts.planRename("missing", "X"), null);
      },
    );
  } finally {
    store.close();
  }
});
