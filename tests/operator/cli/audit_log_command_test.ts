import assert from "node:assert/strict";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { createFixture } from "../../workspace/fixtures.ts";

Deno.test("the admin command reads a business's audit log, newest first", async () => {
  const f = await createFixture();
  try {
    for (const action of ["rename_business", "disable_trigger"]) {
      f.clock.t += 1000;
      await f.audit.append({
        businessId: f.businessId,
        accountId: f.ownerId,
        actor: "agent",
        clientId: "client-1",
        action,
        summary: action,
        gateId: null,
      });
    }
    const out: string[] = [];
    const err: string[] = [];
    const run = (...args: string[]) =>
      runAdminCommand(args, {
        config: resolveConfig({ VESTIBULE_DATA: ":memory:" }),
        store: f.workspace.store,
        now: f.now,
        out: (s) => out.push(s),
        err: (s) => err.push(s),
      });
    assert.equal(await run("audit-log", "--business", f.businessId), 0, err.join("\n"));
    const { entries } = JSON.parse(out.at(-1)!);
    assert.deepEqual(entries.map((e: { action: string }) => e.action), [
      "disable_trigger",
      "rename_business",
    ]);
    assert.equal(await run("audit-log", "--business", f.businessId, "--limit", "1"), 0);
    assert.equal(JSON.parse(out.at(-1)!).entries.length, 1);
    assert.equal(await run("audit-log", "--business", f.businessId, "--limit", "0"), 2);
  } finally {
    f.close();
  }
});
