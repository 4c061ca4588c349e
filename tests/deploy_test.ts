// The files in deploy/ stay in step with deno.json: the unit runs what `deno task start` runs.
import assert from "node:assert/strict";
import { ROOT, startTaskFlags } from "./blackbox/support/main_process.ts";

Deno.test("deploy/vestibule.service runs `deno run` with exactly the start task's flags", async () => {
  const unit = await Deno.readTextFile(new URL("deploy/vestibule.service", ROOT));
  const execStart = unit.split("\n").filter((line) => line.startsWith("ExecStart="));
  assert.equal(execStart.length, 1);
  const [deno, run, ...rest] = execStart[0]!.slice("ExecStart=".length).split(/\s+/);
  assert.match(deno!, /\/deno$/);
  assert.equal(run, "run", "never `deno task`: it would leave the server running on SIGTERM");
  assert.deepEqual(rest, [...await startTaskFlags(), "main.ts"]);
  // The data directory is the only place the process may write.
  assert.match(unit, /^ReadWritePaths=\/opt\/vestibule\/data$/m);
  assert.match(unit, /^WorkingDirectory=\/opt\/vestibule$/m);
});
