// `deno task admin upstreams` (`npm run admin` in the Node.js pass) as a real process with the
// admin task's permissions: the upstreams file and its header secret under ./data, the tiny
// upstream over HTTP (a pinned tool it has changed since), and server-memory as a stdio child,
// which needs the task's --allow-run.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { canonicalSha256 } from "../../../src/canonical_json.ts";
import { prepareSchema } from "../../../src/schema.ts";
import { createUpstreamPins } from "../../../src/workspace/domain/upstream_pins.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL } from "../../../testkit/tiny_upstream_tools.ts";
import { denoChildEnv, MEMORY } from "../../../testkit/upstreams.ts";
import { copyProject, mainCommand, taskFlags } from "../support/main_process.ts";
import { defaultStoreFile, openStoreFile } from "../support/server_runtime.ts";

const SECRET = "Bearer process-secret-31c9";
const LOCK = new URL("../../test.lock", import.meta.url).pathname;

Deno.test("admin upstreams as a process: a changed pin over HTTP, a stdio child with the task's --allow-run, no secret", async () => {
  const dir = await copyProject();
  const tiny = startTinyUpstream();
  try {
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(`${dir}/data/token`, SECRET, { mode: 0o600 });
    await Deno.chmod(`${dir}/data/token`, 0o600);
    await Deno.writeTextFile(
      `${dir}/data/upstreams.json`,
      JSON.stringify({
        upstreams: [
          { name: "tiny", url: tiny.url, headers: { Authorization: { file: "data/token" } } },
          {
            name: "memory",
            command: Deno.execPath(),
            args: ["run", "-A", "--no-config", `--lock=${LOCK}`, MEMORY],
            env: await denoChildEnv(),
          },
        ],
      }),
    );
    const store = await openStoreFile(defaultStoreFile(dir));
    try {
      await prepareSchema(store, Date.now);
      const { business } = await createAccounts(store, Date.now)
        .createAccountWithBusiness("owner@example.com", "Acme");
      const pins = createUpstreamPins(store);
      await store.commit([], [
        pins.pin(business.id, "tiny", {
          definition: ADD_TOOL.definition,
          hash: canonicalSha256(ADD_TOOL.definition),
          pinnedAt: 1,
          approvedBy: null,
        }),
      ]);
    } finally {
      await store.close();
    }
    tiny.setTools([{
      ...ADD_TOOL,
      definition: { ...ADD_TOOL.definition, description: "Adds two numbers, then more." },
    }]);

    const flags = await taskFlags("admin", "src/operator/cli/cli.ts");
    const admin = async (taskFlags: readonly string[], ...args: string[]) => {
      const output = await mainCommand(taskFlags, { VESTIBULE_UPSTREAMS: "data/upstreams.json" }, {
        cwd: dir,
        entry: "src/operator/cli/cli.ts",
        args: ["upstreams", ...args],
      }).output();
      const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
      const result = {
        code: output.code,
        stdout: decode(output.stdout),
        stderr: decode(output.stderr),
      };
      assert.equal(result.code, 0, result.stderr);
      assert.ok(!(result.stdout + result.stderr).includes(SECRET));
      return result.stdout;
    };
    const described = async (taskFlags: readonly string[]) =>
      JSON.parse(await admin(taskFlags, "--json")).upstreams;

    // For a person, a table on standard output; the changed pin below it.
    const table = (await admin(flags)).split("\n");
    assert.match(table[0]!, /^UPSTREAM +STATE +TOOLS +GATED +HIDDEN +HELD +LEFT OUT +LAST ERROR$/);
    assert.match(table[1]!, /^tiny +answers +1 +0 +0 +1 +0 +-$/);
    assert.match(table[2]!, /^memory +answers +\d+ +0 +0 +0 +0 +-$/);
    assert.ok(
      table.includes("  tiny__add  changed in Acme (no approval asked yet)"),
      table.join("\n"),
    );

    const [http, stdio] = await described(flags);
    assert.deepEqual(
      [http.state, http.tools.map((t: { name: string }) => t.name)],
      ["answers", ["tiny__add"]],
    );
    assert.deepEqual(http.tools[0].businesses.map((b: { state: string }) => b.state), ["changed"]);
    assert.equal(stdio.state, "answers", stdio.problem);
    assert.ok(stdio.tools.length > 0);

    // Without --allow-run the child cannot start, and the reason says so.
    const [, refused] = await described(flags.filter((flag) => flag !== "--allow-run"));
    assert.deepEqual([refused.state, refused.problem], [
      "not answering",
      "memory is unreachable: its command may not be run",
    ]);
  } finally {
    await tiny.close();
    await Deno.remove(dir, { recursive: true });
  }
});
