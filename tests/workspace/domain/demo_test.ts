import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import {
  DEMO_BUSINESS_NAME,
  DEMO_OWNER_EMAIL,
  seedDemo,
} from "../../../src/workspace/domain/demo.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("demo data seeds a living business once", async () => {
  const f = await createFixture();
  try {
    const deps = { store: f.workspace.store, accounts: f.accounts, now: f.now };
    const businessId = await seedDemo(deps);
    assert.equal(await seedDemo(deps), businessId);
    assert.equal((await f.accounts.getBusiness(businessId))?.name, DEMO_BUSINESS_NAME);
    const owner = await f.accounts.findAccountByEmail(DEMO_OWNER_EMAIL);
    assert.equal((await f.accounts.getMembership(owner!.id, businessId))?.role, "owner");
    assert.equal((await f.accounts.listBusinessesOf(owner!.id)).length, 1);
    assert.equal((await f.workspace.workflows.list(businessId)).length, 3);
    assert.ok((await f.workspace.runs.list(businessId)).length > 0);
    assert.ok((await f.workspace.connections.list(businessId)).length > 0);
    assert.ok((await f.workspace.triggers.list(businessId)).length > 0);
    assert.ok((await f.workspace.packs.list(businessId)).length > 0);
    assert.ok((await f.workspace.invoices.list(businessId)).length > 0);
    assert.equal((await f.workspace.subscription.get(businessId))?.value.plan, "growth");
  } finally {
    f.close();
  }
});

Deno.test("two replicas seeding the demo at once make one business", async () => {
  const f = await createFixture();
  try {
    const replica = () => ({
      store: f.workspace.store,
      accounts: createAccounts(f.workspace.store, f.now),
      now: f.now,
    });
    const [first, second] = await Promise.all([seedDemo(replica()), seedDemo(replica())]);
    assert.equal(first, second);
    const owner = await f.accounts.findAccountByEmail(DEMO_OWNER_EMAIL);
    assert.equal((await f.accounts.listBusinessesOf(owner!.id)).length, 1);
  } finally {
    f.close();
  }
});
