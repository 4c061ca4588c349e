// The Node.js the tests run the server on: TEST_NODE_BINARY, else `node` on PATH, if it is 24 or
// later and `npm ci` has filled node_modules (testkit/test_suite.ts, tests/blackbox/support/).

/** A Node.js of major version 24 or later, or null with the reason printed. */
export function nodeBinary(): string | null {
  const node = Deno.env.get("TEST_NODE_BINARY") ?? "node";
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
        "24+ (TEST_NODE_BINARY=/path/to/node, or .ci/run installs it)",
    );
    return null;
  }
  try {
    Deno.statSync(new URL("../node_modules/jose/package.json", import.meta.url));
  } catch {
    console.warn("skipping the Node.js tests: node_modules is missing (run npm ci)");
    return null;
  }
  return node;
}

/**
 * What `npm start` runs before the server (package.json's `prestart`: the modules' types stripped
 * once), run with `node` in the checkout; the npm start command of a test or bench follows it.
 */
export async function npmPrestart(node: string): Promise<void> {
  const root = new URL("../", import.meta.url);
  const manifest = JSON.parse(await Deno.readTextFile(new URL("package.json", root)));
  const [command, ...args] = manifest.scripts.prestart.split(/\s+/);
  if (command !== "node") throw new Error(`npm's prestart does not run node: ${command}`);
  const { code, stderr } = await new Deno.Command(node, { args, cwd: root, stdout: "null" })
    .output();
  if (code !== 0) throw new Error(`prestart failed: ${new TextDecoder().decode(stderr)}`);
}
