// The server loads its five runtime dependencies and nothing else: the MCP SDKs, oauth4webapi
// and playwright are test-only peers (DESIGN.md "Stack") and must stay out of main.ts's graph.
import assert from "node:assert/strict";

Deno.test("main.ts loads only jose, nodemailer, postgres, valibot and @valibot/to-json-schema from npm", async () => {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(info.success, new TextDecoder().decode(info.stderr));
  const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    modules: { specifier: string }[];
  };
  const packages = graph.modules
    .map((module) => /^npm:\/(@?[^@]+)@/.exec(module.specifier)?.[1])
    .filter((name) => name !== undefined)
    .sort();
  assert.deepEqual(packages, [
    "@valibot/to-json-schema",
    "jose",
    "nodemailer",
    "postgres",
    "valibot",
  ]);
});

// `deno run` installs every npm package its lock file names, so the lock of `deno task start`
// holds the runtime packages only; the test and bench tasks use tests/test.lock.
Deno.test("deno.lock, the lock of deno task start, names the runtime packages only", async () => {
  const lock = JSON.parse(await Deno.readTextFile(new URL("../deno.lock", import.meta.url))) as {
    npm: Record<string, unknown>;
  };
  const names = Object.keys(lock.npm).map((key) => key.slice(0, key.indexOf("@", 1))).sort();
  assert.deepEqual(names, ["@valibot/to-json-schema", "jose", "nodemailer", "postgres", "valibot"]);
});
