// The server on Node.js, started as `npm start` starts it (package.json's flags, --permission),
// answers the discovery documents and the onboarding MCP endpoint like the Deno one. Needs a
// Node.js 24 or later (TEST_NODE_BINARY, else `node` on PATH) and `npm ci` run in the
// checkout; .ci/run provides both. Without them the test is skipped with a message.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";
import {
  answersDiscoveryAndOnboarding,
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
