/**
 * Workspace section: `tools/list` on {api_url}/api/mcp with a valid access token (so the
 * JWT, grant and membership checks are in every request) against `tools/list` on the
 * onboarding endpoint, on the same server process (bench/workspace_server.ts, rate limits
 * off). wrk drives both in alternating rounds; the median round is reported.
 * Target (issue 5): workspace >= 0.7x onboarding requests/s.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { type LoadResult, parseWrkOutput, wrkAvailable } from "./load.ts";
import { freePorts, startServerProcess } from "./processes.ts";

const ROUNDS = 3;
const TARGET = 0.7;
const HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};
const BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

type Name = "onboarding" | "workspace";

export default {
  name: "workspace",
  async run({ seconds, connections }) {
    if (!(await wrkAvailable())) {
      throw new Error("the workspace section needs wrk (apt-get install wrk)");
    }
    const [base, auth, api] = freePorts(3);
    const dir = await Deno.makeTempDir({ prefix: "vestibule-workspace-bench-" });
    const server = await startServerProcess({
      command: [Deno.execPath(), "run", "-A", "bench/workspace_server.ts", `${dir}/token`],
      env: {
        VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
        VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
        VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
        VESTIBULE_DATA: ":memory:",
        VESTIBULE_RATE_LIMITS: "off",
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
      for (const name of Object.keys(targets) as Name[]) {
        const { url, headers } = targets[name];
        const response = await fetch(url, { method: "POST", headers, body: BODY });
        if (response.status !== 200) throw new Error(`${name} tools/list: ${response.status}`);
        bytes[name] = (await response.arrayBuffer()).byteLength;
        scripts[name] = `${dir}/${name}.lua`;
        await Deno.writeTextFile(scripts[name], _luaScript(headers));
      }
      const runs: Record<Name, LoadResult[]> = { onboarding: [], workspace: [] };
      for (const name of Object.keys(targets) as Name[]) {
        await _wrk(targets[name].url, scripts[name], 1, connections);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of Object.keys(targets) as Name[]) {
          runs[name].push(await _wrk(targets[name].url, scripts[name], seconds, connections));
        }
      }
      const m = { onboarding: _median(runs.onboarding), workspace: _median(runs.workspace) };
      const ratio = m.workspace.requestsPerSecond / m.onboarding.requestsPerSecond;
      console.log(
        `load: wrk, ${connections} connections, ${seconds}s per run, median of ${ROUNDS} ` +
          `alternating rounds; first page of tools/list: workspace ${bytes.workspace} bytes, ` +
          `onboarding ${bytes.onboarding} bytes\n`,
      );
      console.log(table(
        ["endpoint", "req/s", "p99 ms", "errors"],
        (Object.keys(targets) as Name[]).map((name) => [
          name,
          m[name].requestsPerSecond.toFixed(0),
          m[name].p99Ms.toFixed(2),
          String(runs[name].reduce((n, r) => n + r.errors, 0)),
        ]),
      ));
      console.log(
        `\nworkspace/onboarding ${ratio.toFixed(3)} (>= ${TARGET}: ${
          ratio >= TARGET ? "ok" : "BELOW"
        })`,
      );
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

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
