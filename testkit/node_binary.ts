// The Node.js the tests run the server on: TEST_NODE_BINARY, else `node` on PATH, if it is 24 or
// later and `npm ci` has filled node_modules (testkit/test_suite.ts, tests/blackbox/support/).

/** `node` (by default TEST_NODE_BINARY's, else PATH's) if it is Node.js 24+, or null and why. */
export function nodeBinary(node = Deno.env.get("TEST_NODE_BINARY") ?? "node"): string | null {
  const major = nodeMajor(node);
  if (major < 24) {
    const found = major === 0 ? "not installed" : `Node.js ${major}`;
    console.warn(
      `skipping the Node.js tests: ${node} is ${found}; they need Node.js 24+ ` +
        "(TEST_NODE_BINARY=/path/to/node, or .ci/run installs it)",
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

const majors = new Map<string, number>();

/** The major version of the Node.js `node` (24, 26, …); 0 when there is none to run. */
export function nodeMajor(node: string): number {
  let major = majors.get(node);
  if (major === undefined) {
    let version = "";
    try {
      const output = new Deno.Command(node, { args: ["--version"], stdout: "piped" }).outputSync();
      version = new TextDecoder().decode(output.stdout);
    } catch {
      // Not installed.
    }
    major = Number(/^v(\d+)\./.exec(version)?.[1] ?? 0);
    majors.set(node, major);
  }
  return major;
}

/**
 * Strips the modules' types into the cache as `npm start` does before the server
 * (deploy/strip_types.mjs), with `node` in the checkout: for servers started with the server's
 * flags directly rather than through `npm start`.
 */
export async function stripModuleTypes(node: string): Promise<void> {
  const { code, stderr } = await new Deno.Command(node, {
    args: [
      "--disable-warning=ExperimentalWarning",
      "--input-type=module",
      "-e",
      'import { stripTypes } from "./deploy/strip_types.mjs"; stripTypes();',
    ],
    cwd: new URL("../", import.meta.url),
    stdout: "null",
  }).output();
  if (code !== 0) throw new Error(`stripping failed: ${new TextDecoder().decode(stderr)}`);
}
