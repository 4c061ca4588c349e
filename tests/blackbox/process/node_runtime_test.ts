// The server on Node.js, started as `npm start` starts it (package.json's flags, --permission),
// answers the discovery documents and the onboarding MCP endpoint like the Deno one. Needs a
// Node.js 24 or later (TEST_NODE_BINARY, else `node` on PATH) and `npm ci` run in the
// checkout; .ci/run provides both. Without them the test is skipped with a message.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";
import {
  answersDiscoveryAndOnboarding,
  npmScriptCommand,
  npmStartCommand,
  npmStartFlags,
} from "../support/node_runtime.ts";
import { nodeBinary, stripModuleTypes } from "../../../testkit/node_binary.ts";

const node = nodeBinary();

Deno.test({
  name: "on Node.js the server answers the discovery documents and the onboarding MCP endpoint",
  ignore: node === null,
  async fn() {
    const cluster = await startPgCluster();
    try {
      const origins = originsEnv();
      const env = {
        NO_COLOR: "1",
        ...origins,
        VESTIBULE_DATA: await cluster.database(),
        VESTIBULE_MAIL: "log",
      };
      const command = await npmStartCommand(node!, env);
      const server = await startServerProcess(ROOT.pathname, env, command);
      try {
        await answersDiscoveryAndOnboarding(origins);
      } finally {
        const stopped = await server.stop();
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stdout, /"message":"stopped"/);
      }
    } finally {
      await cluster.stop();
    }
  },
});

Deno.test({
  name: "npm start strips the modules' types first: the server never loads Node's type stripper",
  ignore: node === null,
  async fn() {
    const run = async (args: string[]) => {
      const { code, stdout, stderr } = await new Deno.Command(node!, { args, cwd: ROOT }).output();
      const decoder = new TextDecoder();
      assert.equal(code, 0, decoder.decode(stderr));
      return decoder.decode(stdout).trim();
    };
    await stripModuleTypes(node!);
    const hooks = (await npmStartFlags(node!)).filter((_, i, flags) =>
      flags[i - 1] === "--require"
    );
    assert.deepEqual(hooks, ["./src/runtime/stripped_modules.cjs"]);
    // Loads what the server loads, then `also` (a module the cache does not hold), and says
    // whether Node's stripper was loaded.
    const probe = (imports: string[], also = "") =>
      run([
        ...imports.flatMap((hook) => ["--require", hook]),
        "--disable-warning=ExperimentalWarning",
        "--input-type=module",
        "-e",
        `await import("./main.ts"); ${also}
        console.log(process.moduleLoadList.some((name) => name.includes("amaro")));`,
      ]);
    assert.equal(await probe([]), "true", "without the cache, Node strips each module");
    assert.equal(await probe(hooks), "false");
    // A module the cache does not hold (an edited one, say) is stripped by Node as it loads.
    const extra = await Deno.makeTempFile({ suffix: ".ts" });
    try {
      await Deno.writeTextFile(extra, "export const answer: number = 42;\n");
      const loaded = await probe(
        hooks,
        `console.log((await import(${JSON.stringify(`file://${extra}`)})).answer);`,
      );
      assert.equal(loaded, "42\ntrue");
    } finally {
      await Deno.remove(extra);
    }
  },
});

Deno.test({
  name: "npm start strips only what the cache lacks: an unchanged tree leaves it as it was",
  ignore: node === null,
  async fn() {
    const cache = new URL("node_modules/.cache/vestibule/modules.json", ROOT);
    // Strips as npm start does, and says whether Node's stripper was loaded for it.
    const strip = async () => {
      const { code, stdout, stderr } = await new Deno.Command(node!, {
        args: [
          "--disable-warning=ExperimentalWarning",
          "--input-type=module",
          "-e",
          `import { stripTypes } from "./deploy/strip_types.mjs"; stripTypes();
          console.log(process.moduleLoadList.some((name) => name.includes("amaro")));`,
        ],
        cwd: ROOT,
      }).output();
      assert.equal(code, 0, new TextDecoder().decode(stderr));
      return new TextDecoder().decode(stdout).trim() === "true";
    };
    await stripModuleTypes(node!);
    const full = await Deno.readTextFile(cache);
    const { mtime } = await Deno.stat(cache);
    assert.equal(await strip(), false, "an unchanged tree loads no stripper");
    assert.deepEqual((await Deno.stat(cache)).mtime, mtime, "and leaves the cache as it was");
    // A module the cache does not hold (an edited one) is stripped, and the rest kept.
    const entries = Object.entries(JSON.parse(full));
    await Deno.writeTextFile(cache, JSON.stringify(Object.fromEntries(entries.slice(1))));
    assert.equal(await strip(), true);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(cache)), JSON.parse(full));
  },
});

Deno.test({
  name: "npm run admin runs a command through the launcher, writing nowhere but ./data",
  ignore: node === null,
  async fn() {
    const data = `data/test-admin-${crypto.randomUUID()}.sqlite`;
    const env = { NO_COLOR: "1", VESTIBULE_DATA: data };
    const admin = async (...args: string[]) => {
      const { code, stdout, stderr } = await (await npmScriptCommand(node!, "admin", env, args))
        .output();
      const decoder = new TextDecoder();
      return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
    };
    const outside = await Deno.makeTempDir({ prefix: "vestibule-admin-" });
    try {
      const created = await admin(
        "create-business",
        "--owner",
        "owner@example.com",
        "--name",
        "Shop",
      );
      assert.equal(created.code, 0, created.stderr);
      const listed = await admin("list-businesses");
      assert.equal(listed.code, 0, listed.stderr);
      const [only] = JSON.parse(listed.stdout).businesses;
      assert.equal(only.business.name, "Shop");
      assert.deepEqual(only.members.map((m: { email: string }) => m.email), ["owner@example.com"]);
      // The launcher gave the command Node's permission model: a file outside ./data is refused.
      const refused = await admin("export", "--output", `${outside}/export.json`);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /^vestibule admin export: cannot write --output .*\n$/);
      assert.deepEqual([...Deno.readDirSync(outside)], []);
    } finally {
      await Deno.remove(outside, { recursive: true });
      for (const suffix of ["", "-wal", "-shm"]) {
        await Deno.remove(new URL(`../../../${data}${suffix}`, import.meta.url)).catch(() => {});
      }
    }
  },
});
