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

const majors = new Map<string, number>();

/** The major version of the Node.js `node` (24, 26, …). */
export function nodeMajor(node: string): number {
  let major = majors.get(node);
  if (major === undefined) {
    const output = new Deno.Command(node, { args: ["--version"], stdout: "piped" }).outputSync();
    major = Number(/^v(\d+)\./.exec(new TextDecoder().decode(output.stdout))![1]);
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
