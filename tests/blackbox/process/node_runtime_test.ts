// The server on Node.js, started as `npm start` starts it (package.json's flags, --permission),
// answers the discovery documents and the onboarding MCP endpoint like the Deno one. Needs a
// Node.js 24 or later (VESTIBULE_TEST_NODE, else `node` on PATH) and `npm ci` run in the
// checkout; .ci/run provides both. Without them the test is skipped with a message.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { INITIALIZE, rpc } from "../support/mcp_helpers.ts";
import { originsEnv, ROOT, startServerProcess } from "../support/main_process.ts";

/** The Node.js flags of package.json's `start` script; never without --permission. */
async function npmStartFlags(): Promise<string[]> {
  const manifest = JSON.parse(await Deno.readTextFile(new URL("package.json", ROOT)));
  const words: string[] = manifest.scripts.start.split(/\s+/);
  assert.equal(words[0], "node");
  assert.equal(words.at(-1), "main.ts");
  const flags = words.slice(1, -1);
  assert.ok(flags.includes("--permission"), "npm start runs node with --permission");
  const writes = flags.filter((f) => f.startsWith("--allow-fs-write="));
  assert.deepEqual(writes, ["--allow-fs-write=./data", "--allow-fs-write=./data/*"]);
  return flags;
}

/** A Node.js of major version 24 or later, or null with the reason printed. */
function nodeBinary(): string | null {
  const node = Deno.env.get("VESTIBULE_TEST_NODE") ?? "node";
  let version = "";
  try {
    const output = new Deno.Command(node, { args: ["--version"], stdout: "piped" }).outputSync();
    version = new TextDecoder().decode(output.stdout).trim();
  } catch {
    // Not installed: reported below.
  }
  const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? 0);
  if (major < 24) {
    console.warn(
      `skipping the Node.js tests: ${node} is ${version || "not installed"}; they need Node.js ` +
        "24+ (VESTIBULE_TEST_NODE=/path/to/node, or .ci/run installs it)",
    );
    return null;
  }
  try {
    Deno.statSync(new URL("node_modules/jose/package.json", ROOT));
  } catch {
    console.warn("skipping the Node.js tests: node_modules is missing (run npm ci)");
    return null;
  }
  return node;
}

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
      const command = new Deno.Command(node!, {
        args: [...await npmStartFlags(), "main.ts"],
        cwd: ROOT,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      });
      const server = await startServerProcess(ROOT.pathname, env, command);
      try {
        const resource = await fetch(
          `${origins.VESTIBULE_API_URL}/.well-known/oauth-protected-resource`,
        );
        assert.equal(resource.status, 200);
        const protectedResource = await resource.json();
        assert.equal(protectedResource.resource, origins.VESTIBULE_API_URL);
        assert.deepEqual(protectedResource.authorization_servers, [
          `${origins.VESTIBULE_AUTH_URL}/api/auth`,
        ]);
        const metadata = await fetch(
          `${origins.VESTIBULE_AUTH_URL}/.well-known/oauth-authorization-server/api/auth`,
        );
        assert.equal(metadata.status, 200);
        assert.equal((await metadata.json()).issuer, `${origins.VESTIBULE_AUTH_URL}/api/auth`);
        const developers = await fetch(`${origins.VESTIBULE_BASE_URL}/developers.json`);
        assert.equal(developers.status, 200);
        await developers.body?.cancel();

        const onboarding = `${origins.VESTIBULE_AUTH_URL}/mcp`;
        const initialized = await rpc(onboarding, INITIALIZE);
        assert.equal(initialized.result.serverInfo.name, "vestibule-onboarding");
        const listed = await rpc(onboarding, { jsonrpc: "2.0", id: 1, method: "tools/list" });
        const names = listed.result.tools.map((tool: { name: string }) => tool.name);
        assert.ok(names.includes("get_connection_guide"), names.join(", "));
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
