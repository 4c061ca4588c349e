// The server loads its four runtime dependencies and nothing else: the MCP SDKs, oauth4webapi
// and playwright are test-only peers (DESIGN.md "Stack") and must stay out of main.ts's graph.
import assert from "node:assert/strict";

Deno.test("main.ts loads only jose, nodemailer, valibot and @valibot/to-json-schema from npm", async () => {
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
  assert.deepEqual(packages, ["@valibot/to-json-schema", "jose", "nodemailer", "valibot"]);
});
