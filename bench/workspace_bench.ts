/**
 * Workspace section: `tools/list` on {api_url}/api/mcp with a valid access token (so the
 * token, grant and membership checks are in every request) against `tools/list` on the
 * onboarding endpoint, on the same server process (bench/workspace_server.ts, rate limits
 * off). wrk drives both in alternating rounds; the median round is reported.
 * Target (issue 5): workspace >= 0.7x onboarding requests/s.
 *
 * Two runs: the default page size (the workspace's first page holds 20 tools and is about
 * three times the bytes of the onboarding page), and pages of as many tools as the
 * onboarding catalogue has, which leaves the authentication as the main difference.
 * Both on Deno KV in memory and on PostgreSQL (bench/stores.ts), where the grant and membership
 * checks are queries to the database.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { type LoadResult, parseWrkOutput, wrkAvailable } from "./load.ts";
import { startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";
import { type BenchStore, onEachStore } from "./stores.ts";

const ROUNDS = 3;
const TARGET = 0.7;
const HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

type Name = "onboarding" | "workspace";
const NAMES: readonly Name[] = ["onboarding", "workspace"];

interface Run {
  readonly store: string;
  readonly label: string;
  readonly bytes: Record<Name, number>;
  readonly median: Record<Name, LoadResult>;
  readonly errors: Record<Name, number>;
  /** Tools on the onboarding endpoint's first page. */
  readonly onboardingTools: number;
}

export default {
  name: "workspace",
  async run({ seconds, connections }) {
    if (!(await wrkAvailable())) {
      throw new Error("the workspace section needs wrk (apt-get install wrk)");
    }
    const runs = (await onEachStore(async (store) => {
      const first = await _measure(store, "default page size", undefined, seconds, connections);
      const pageSize = first.onboardingTools;
      const label = `pages of ${pageSize} tools`;
      return [first, await _measure(store, label, pageSize, seconds, connections)];
    })).flat();
    console.log(
      `load: wrk, ${connections} connections, ${seconds}s per run, median of ${ROUNDS} ` +
        `alternating rounds\n`,
    );
    const rows: string[][] = [];
    for (const run of runs) {
      for (const name of NAMES) {
        rows.push([
          run.store,
          run.label,
          name,
          String(run.bytes[name]),
          run.median[name].requestsPerSecond.toFixed(0),
          run.median[name].p99Ms.toFixed(2),
          String(run.errors[name]),
        ]);
      }
    }
    console.log(
      table(["store", "run", "endpoint", "page bytes", "req/s", "p99 ms", "errors"], rows),
    );
    console.log("");
    for (const run of runs) {
      const ratio = run.median.workspace.requestsPerSecond /
        run.median.onboarding.requestsPerSecond;
      console.log(
        `${run.store}, ${run.label}: workspace/onboarding ${ratio.toFixed(3)} (>= ${TARGET}: ${
          ratio >= TARGET ? "ok" : "BELOW"
        })`,
      );
    }
  },
} satisfies BenchSection;

async function _measure(
  store: BenchStore,
  label: string,
  pageSize: number | undefined,
  seconds: number,
  connections: number,
): Promise<Run> {
  const [base, auth, api] = freePorts(3);
  const dir = await Deno.makeTempDir({ prefix: "vestibule-workspace-bench-" });
  const server = await startServerProcess({
    command: [Deno.execPath(), "run", "-A", "bench/workspace_server.ts", `${dir}/token`],
    env: {
      VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
      VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
      VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
      VESTIBULE_DATA: await store.data(),
      VESTIBULE_RATE_LIMITS: "off",
      ...(pageSize === undefined ? {} : { VESTIBULE_MCP_PAGE_SIZE: String(pageSize) }),
    },
    readyUrl: `http://127.0.0.1:${base}/health`,
  });
  try {
    const token = await Deno.readTextFile(`${dir}/token`);
    const targets: Record<Name, { url: string; headers: Record<string, string> }> = {
      onboarding: { url: `http://127.0.0.1:${auth}/mcp`, headers: HEADERS },
      workspace: {
        url: `http://127.0.0.1:${api}/api/mcp`,
        headers: { ...HEADERS, Authorization: `Bearer ${token}` },
      },
    };
    const bytes: Record<Name, number> = { onboarding: 0, workspace: 0 };
    const scripts = {} as Record<Name, string>;
    let onboardingTools = 0;
    for (const name of NAMES) {
      const { url, headers } = targets[name];
      const response = await fetch(url, { method: "POST", headers, body: BODY });
      if (response.status !== 200) throw new Error(`${name} tools/list: ${response.status}`);
      const text = await response.text();
      bytes[name] = new TextEncoder().encode(text).byteLength;
      if (name === "onboarding") onboardingTools = JSON.parse(text).result.tools.length;
      scripts[name] = `${dir}/${name}.lua`;
      await Deno.writeTextFile(scripts[name], _luaScript(headers));
    }
    const results: Record<Name, LoadResult[]> = { onboarding: [], workspace: [] };
    for (const name of NAMES) await _wrk(targets[name].url, scripts[name], 1, connections);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of NAMES) {
        results[name].push(await _wrk(targets[name].url, scripts[name], seconds, connections));
      }
    }
    return {
      store: store.name,
      label,
      bytes,
      onboardingTools,
      median: { onboarding: _median(results.onboarding), workspace: _median(results.workspace) },
      errors: {
        onboarding: results.onboarding.reduce((n, r) => n + r.errors, 0),
        workspace: results.workspace.reduce((n, r) => n + r.errors, 0),
      },
    };
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

function _luaScript(headers: Readonly<Record<string, string>>): string {
  const lines = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(BODY)}`];
  for (const [name, value] of Object.entries(headers)) {
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  return lines.join("\n") + "\n";
}

async function _wrk(
  url: string,
  script: string,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const output = await new Deno.Command("wrk", {
    args: ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  return { tool: "wrk", ...parseWrkOutput(new TextDecoder().decode(output.stdout)) };
}

function _median(runs: readonly LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}
