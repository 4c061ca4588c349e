// Direct writes under concurrency: a change another request (or replica) commits between a
// tool's read and its write is kept, and the write comes with its audit entry.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createMailService } from "../../../src/mail/mail_outbox.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Store } from "../../../src/store/store.ts";
import type { AnyWorkspaceTool } from "../../../src/workspace/mcp/scoped_tool.ts";
import { writeTools } from "../../../src/workspace/mcp/writes.ts";
import type { WorkspaceAuth } from "../../../src/workspace/mcp/bearer.ts";
import type { Pack } from "../../../src/workspace/domain/records.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { createWorkspace } from "../../../src/workspace/domain/workspace.ts";

const PACK: Pack = {
  id: "pack-1",
  name: "Retail",
  vertical: "retail",
  enabled: true,
  version: "1.0",
  latestVersion: "1.1",
  settings: { a: "1" },
  updatedAt: 0,
};

Deno.test("configure_pack keeps a change committed between its read and its write", async () => {
  const store = await openKvStore(":memory:");
  try {
    const accounts = createAccounts(store, Date.now);
    const { account, business } = await accounts.createAccountWithBusiness(
      "owner@example.com",
      "Acme",
    );
    const packs = createWorkspace(store).packs;
    await packs.put(business.id, PACK);
    let raced = false;
    // Another replica sets setting "b" just before this one writes.
    const racing: Store = {
      ...store,
      async commit(checks, mutations) {
        if (!raced) {
          raced = true;
          const current = (await packs.get(business.id, PACK.id))!.value;
          await packs.put(business.id, { ...current, settings: { ...current.settings, b: "2" } });
        }
        return await store.commit(checks, mutations);
      },
      async set(key, value, options) {
        await racing.commit([], [{ type: "set", key, value, ...options }]);
      },
    };
    const services = createWorkspaceServices({
      store: racing,
      now: Date.now,
      accounts,
      mailer: createMailService({
        store: racing,
        now: Date.now,
        transport: { send: () => Promise.resolve() },
        log: () => {},
      }).mailer,
      authUrl: "http://auth.test",
    });
    const auth: WorkspaceAuth = {
      accountId: account.id,
      businessId: business.id,
      clientId: "client",
      clientName: "Client",
      grantId: "grant",
      scopes: ["app.access", "packs.manage"],
      role: "owner",
    };
    const tool: AnyWorkspaceTool = writeTools(services).find((t) => t.name === "configure_pack")!;
    const result = await tool.handler(
      { packId: PACK.id, settings: { c: "3" } },
      { auth, progress: () => Promise.resolve(), signal: new AbortController().signal },
    );
    assert.ok(raced);
    const stored = (await packs.get(business.id, PACK.id))!.value;
    assert.deepEqual(stored.settings, { a: "1", b: "2", c: "3" });
    assert.deepEqual(result, { pack: stored });
    const audit = await services.audit.list(business.id);
    assert.deepEqual(audit.map((e) => e.summary), ['Pack "Retail": set c']);
  } finally {
    store.close();
  }
});
