import assert from "node:assert/strict";
import { createWorkspaceAccountSection } from "../../../src/workspace/pages/account_section.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("account section: connection status per client, audit log for owners only", async () => {
  const f = await createFixture();
  try {
    const section = createWorkspaceAccountSection(f);
    const owner = { businessId: f.businessId, clientId: "client-<1>", accountId: f.ownerId };
    const { attempt } = await f.connectionTests.start(owner, false);
    await f.connectionTests.verify(owner, attempt.id);
    await f.connectionTests.start({ ...owner, clientId: "client-2" }, false);
    await f.audit.append({
      businessId: f.businessId,
      accountId: f.memberId,
      actor: "agent",
      clientId: "client-2",
      action: "rename_business",
      summary: "Renamed <b>",
      gateId: null,
    });
    // What the business's systems reported through the operator API acts for no account.
    await f.audit.append({
      businessId: f.businessId,
      accountId: null,
      actor: "operator",
      clientId: null,
      action: "updateWorkflowRun",
      summary: "Workflow run r1 of wf-1: queued → running",
      gateId: null,
    });

    const forOwner = (await section(f.businessId, "owner")).value;
    assert.match(
      forOwner,
      /client-&lt;1&gt;<\/td>\s*<td data-connection-status="verified">verified/,
    );
    assert.match(forOwner, /client-2<\/td>\s*<td data-connection-status="pending">waiting/);
    assert.ok(forOwner.includes("member@example.com (agent)"));
    assert.ok(forOwner.includes("rename_business: Renamed &lt;b&gt;"));
    assert.ok(forOwner.includes("the business&#39;s systems (by the operator)"), forOwner);

    const forMember = (await section(f.businessId, "member")).value;
    assert.ok(forMember.includes('data-connection-status="verified"'));
    assert.ok(!forMember.includes("Audit log"));
  } finally {
    f.close();
  }
});
