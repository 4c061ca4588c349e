import assert from "node:assert/strict";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { createFixture } from "../../workspace/fixtures.ts";

Deno.test("`admin audit --json` prints JSON lines oldest first, resumes after a cursor, and follows new entries", async () => {
  const f = await createFixture();
  const append = (action: string) =>
    f.audit.append({
      businessId: f.businessId,
      accountId: f.ownerId,
      actor: "agent",
      clientId: "client-1",
      action,
      summary: `did ${action}`,
      gateId: null,
    });
  try {
    for (const action of ["first", "second"]) {
      f.clock.t += 1000;
      await append(action);
    }
    f.clock.t += 10_000;
    const out: string[] = [];
    const err: string[] = [];
    let waits = 0;
    const stop = new AbortController();
    const deps = {
      config: resolveConfig({ VESTIBULE_DATA: ":memory:" }),
      store: f.workspace.store,
      now: f.now,
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      // The follower's pauses: a new entry comes, time passes; the third pause ends it.
      wait: async () => {
        waits++;
        if (waits === 1) await append("third");
        f.clock.t += 5_000;
        if (waits === 3) stop.abort();
      },
      stop: stop.signal,
    };
    const lines = () => out.splice(0).map((line) => JSON.parse(line));

    assert.equal(await runAdminCommand(["audit", "--json"], deps), 0, err.join("\n"));
    const all = lines();
    assert.deepEqual(all.map((l) => l.action), ["first", "second"]);
    assert.equal(all[0].summary, "did first");
    assert.equal(all[0].businessId, f.businessId);
    assert.match(all[0].cursor, /^\d+$/);

    assert.equal(await runAdminCommand(["audit", "--json", "--after", all[0].cursor], deps), 0);
    assert.deepEqual(lines().map((l) => l.action), ["second"]);

    assert.equal(
      await runAdminCommand(["audit", "--json", "--follow", "--after", all[1].cursor], deps),
      0,
      err.join("\n"),
    );
    assert.deepEqual(lines().map((l) => l.action), ["third"], "printed once, when it came");
    assert.equal(waits, 3);

    assert.equal(await runAdminCommand(["audit", "--business", f.businessId], deps), 0);
    assert.match(out.at(0) ?? "", / agent first: did first$/, "a line for a person without --json");
    assert.equal(await runAdminCommand(["audit", "--business", "nope"], deps), 1);
    assert.match(err.join("\n"), /No business with id "nope"/);
    assert.equal(await runAdminCommand(["audit", "--after", "yesterday"], deps), 2);
  } finally {
    f.close();
  }
});
