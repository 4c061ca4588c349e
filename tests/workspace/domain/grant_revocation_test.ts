import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/config.ts";
import { getGrant } from "../../../src/oauth/grants.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { revokeGrantWithAudit } from "../../../src/workspace/domain/grant_revocation.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";

const config = resolveConfig({
  VESTIBULE_AUTH_URL: "https://auth.example.com",
  VESTIBULE_API_URL: "https://api.example.com",
  VESTIBULE_BASE_URL: "https://www.example.com",
});
const now = () => Date.UTC(2026, 0, 1);

Deno.test("revoking a grant ends it and audits it with its account, business and client", async () => {
  const store = await openKvStore(":memory:");
  try {
    const { grantId } = await issueGrant({ config, store, now }, {
      accountId: "acc1",
      businessId: "biz1",
      clientId: "client1",
      clientName: "Claude",
      scopes: ["app.access"],
    });
    const grant = (await getGrant(store, grantId))!;
    const audit = createAuditLog(store, now);
    await revokeGrantWithAudit(store, audit, grant, {
      actor: "human",
      action: "revoke_grant",
      summary: "revoked the access of Claude on /account",
    });
    assert.equal(await getGrant(store, grantId), null);
    const [entry, ...more] = await audit.list("biz1");
    assert.deepEqual(more, []);
    const { id: _id, ...stored } = entry!;
    // The stored record to the byte, field order included.
    assert.equal(
      JSON.stringify(stored),
      JSON.stringify({
        at: now(),
        businessId: "biz1",
        accountId: "acc1",
        actor: "human",
        clientId: "client1",
        action: "revoke_grant",
        summary: "revoked the access of Claude on /account",
        gateId: null,
      }),
    );
  } finally {
    await store.close();
  }
});
