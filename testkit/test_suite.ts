// `deno task test`: the whole suite on Deno, then the tests that start the real server again with
// every server on Node.js (TEST_SERVER_RUNTIME=node), once for each Node.js 24+ found:
// TEST_NODE_BINARIES (colon-separated, as CI sets it for the two LTS lines, 24 and 26), else the
// one of TEST_NODE_BINARY or PATH. Each pass ends with Deno's own `ok | N passed | M failed` line;
// .ci/run adds them up. Files named on the command line narrow every pass (the Node.js passes to
// those among NODE_PASS).
import { nodeBinary, nodeMajor, stripModuleTypes } from "./node_binary.ts";

/** What starts a real server: run again on Node.js. Unit tests stay on Deno's runner alone. */
export const NODE_PASS = ["tests/blackbox/", "tests/browser/", "tests/interop/"];

const TEST = ["test", "--lock=tests/test.lock", "--allow-all", "--unstable-kv"];

async function pass(name: string, files: string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [...TEST, ...files],
    env,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  console.log(`${name} pass: ${code === 0 ? "passed" : "failed"} in ${minutes} min`);
  return code;
}

const named = Deno.args.length > 0;
const denoCode = await pass("Deno", named ? Deno.args : ["tests/"], {});
const nodeFiles = named
  ? Deno.args.filter((file) => NODE_PASS.some((dir) => file.replace(/^\.\//, "").startsWith(dir)))
  : NODE_PASS;
let nodeCode = 0;
if (nodeFiles.length > 0) {
  const listed = Deno.env.get("TEST_NODE_BINARIES")?.split(":").filter((path) => path !== "");
  const nodes = listed === undefined ? [nodeBinary()] : listed.map((path) => nodeBinary(path));
  for (const node of nodes) {
    if (node === null) {
      console.log("Node.js pass: skipped, no Node.js 24+ (see the line above)");
      continue;
    }
    // What `npm start` does first, so that servers started with its flags load as users' do.
    await stripModuleTypes(node);
    const name = `Node.js ${nodeMajor(node)}`;
    const env = { TEST_SERVER_RUNTIME: "node", TEST_NODE_BINARY: node };
    if (await pass(name, nodeFiles, env) !== 0) nodeCode = 1;
  }
}
Deno.exit(denoCode !== 0 || nodeCode !== 0 ? 1 : 0);
