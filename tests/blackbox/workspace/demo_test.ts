import assert from "node:assert/strict";
import { DEMO_BUSINESS_NAME, DEMO_OWNER_EMAIL } from "../../../src/workspace/domain/demo.ts";
import { createWorkspace } from "../../../src/workspace/domain/workspace.ts";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { startTestServer } from "../support/harness.ts";

Deno.test("VESTIBULE_DEMO=1 seeds a living workspace; without it the store is empty", async (t) => {
  await t.step("with the switch", async () => {
    const server = await startTestServer({ VESTIBULE_DEMO: "1" });
    try {
      const accounts = createAccounts(server.store, Date.now);
      const owner = await accounts.findAccountByEmail(DEMO_OWNER_EMAIL);
      assert.ok(owner);
      const [membership] = await accounts.listBusinessesOf(owner.id);
      assert.equal(membership?.business.name, DEMO_BUSINESS_NAME);
      const workspace = createWorkspace(server.store);
      assert.ok((await workspace.workflows.list(membership.business.id)).length > 0);
    } finally {
      await server.close();
    }
  });

  await t.step("without it", async () => {
    const server = await startTestServer();
    try {
      const entries = [];
      for await (const entry of server.store.list(["ws"])) entries.push(entry);
      assert.deepEqual(entries, []);
      assert.equal(
        await createAccounts(server.store, Date.now).findAccountByEmail(DEMO_OWNER_EMAIL),
        null,
      );
    } finally {
      await server.close();
    }
  });
});
