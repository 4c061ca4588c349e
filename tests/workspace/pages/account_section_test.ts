import assert from "node:assert/strict";
import { createWorkspaceAccountSection } from "../../../src/workspace/pages/account_section.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("account section: each client's connection test in words, approvals for owners only", async () => {
  const f = await createFixture();
  try {
    const names: Record<string, string> = { "client-<1>": "Claude <Desktop>" };
    const section = createWorkspaceAccountSection({
      ...f,
      clientName: (id) => Promise.resolve(names[id] ?? null),
    });
    const owner = { businessId: f.businessId, clientId: "client-<1>", accountId: f.ownerId };
    const { attempt } = await f.connectionTests.start(owner, false);
    await f.connectionTests.verify(owner, attempt.id);
    await f.connectionTests.start({ ...owner, clientId: "client-2" }, false);

    const forOwner = await section(f.businessId, "owner");
    assert.match(
      forOwner.connectionTests.get("client-<1>")!.status.value,
      /data-connection-status="verified">connection test passed <time/,
    );
    assert.equal(forOwner.connectionTests.get("client-<1>")!.clientName, "Claude <Desktop>");
    const unnamed = forOwner.connectionTests.get("client-2")!;
    assert.equal(unnamed.clientName, "client-2", "no name left: its id");
    assert.match(unnamed.status.value, /waiting for the agent/);
    assert.match(forOwner.approvals!.value, /Nothing is waiting/);

    const forMember = await section(f.businessId, "member");
    assert.equal(forMember.approvals, null);
    assert.equal(forMember.connectionTests.size, 2);
  } finally {
    f.close();
  }
});
