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

Deno.test("the compile task builds the executable with the start task's V8 flags", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const v8 = (words: readonly string[]) => words.filter((word) => word.startsWith("--v8-flags="));
  const start = v8(await startTaskFlags());
  assert.equal(start.length, 1);
  // The heap as the start task sets it: a compiled server must not collect garbage differently.
  assert.deepEqual(v8(config.tasks.compile.split(/\s+/)), start);
});

Deno.test("deploy/nginx.conf passes answers through as Vestibule sends them", async () => {
  const conf = await Deno.readTextFile(new URL("deploy/nginx.conf", ROOT));
  const directives = conf.split("\n").map((line) => line.replace(/#.*/, "").trim()).filter(Boolean);
  // Headers hidden or added by the proxy would take the discovery documents' CORS, caching or
  // ETag away (MCP Server Cards, "CORS Requirements"; tests/blackbox/http/nginx_discovery_test.ts
  // runs it).
  assert.deepEqual(
    directives.filter((d) =>
      /^(proxy_hide_header|add_header|more_clear_headers|proxy_ignore_headers)\b/.test(d)
    ),
    [],
  );
  for (const wanted of ["gzip off;", "proxy_buffering off;", "proxy_cache off;"]) {
    assert.ok(directives.includes(wanted), wanted);
  }
});
