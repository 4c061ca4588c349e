/**
 * MCP section: `initialize` and `tools/list` on the onboarding endpoint of the real server
 * (bench/vestibule_server.ts, rate limits off) against, in the same run,
 *  - the official MCP TypeScript SDK's stateless Streamable HTTP server on Node
 *    (bench/mcp_sdk_server.mjs) serving the same tools with the same schemas, JSON answers;
 *  - a bare Deno.serve answering every POST with the precomputed tools/list bytes
 *    (bench/baseline_server.ts), the limit for this design.
 * Each server runs in its own process; wrk (with a small Lua script for the POST) drives
 * them in alternating rounds and the median round is reported, with peak RSS (VmHWM).
 * Targets (issue 3): >= 100x the SDK's requests/s, >= 0.8x bare, lower p99 than both,
 * peak memory <= 1.3x bare.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { type LoadResult, parseWrkOutput, wrkAvailable } from "./load.ts";
import { freePorts, type ServerProcess, startServerProcess } from "./processes.ts";

const ROUNDS = 3;
const SDK_VERSION = "1.32.2";
const SDK_CACHE = new URL("../.ci/cache/mcp-sdk-node/", import.meta.url);
const SDK_DIR = new URL("node_modules/@modelcontextprotocol/sdk", SDK_CACHE).pathname;

const VERSION = "2025-11-25";
const HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": VERSION,
};
const BODIES = {
  initialize: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: VERSION,
      capabilities: {},
      clientInfo: { name: "bench", version: "1" },
    },
  }),
  "tools/list": JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
} as const;
type Method = keyof typeof BODIES;

type Name = "vestibule" | "sdk" | "bare";

export default {
  name: "mcp",
  async run({ seconds, connections }) {
    if (!(await wrkAvailable())) throw new Error("the mcp section needs wrk (apt-get install wrk)");
    await _ensureSdk();
    const [base, auth, api, barePort, sdkPort] = freePorts(5);
    const urls: Record<Name, string> = {
      vestibule: `http://127.0.0.1:${auth}/mcp`,
      bare: `http://127.0.0.1:${barePort}/mcp`,
      sdk: `http://127.0.0.1:${sdkPort}/mcp`,
    };
    const dir = await Deno.makeTempDir({ prefix: "vestibule-mcp-bench-" });
    const servers: Partial<Record<Name, ServerProcess>> = {};
    try {
      servers.vestibule = await startServerProcess({
        command: [Deno.execPath(), "run", "-A", "bench/vestibule_server.ts"],
        env: {
          VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
          VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
          VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
          VESTIBULE_DATA: ":memory:",
          VESTIBULE_RATE_LIMITS: "off",
        },
        readyUrl: `http://127.0.0.1:${base}/health`,
      });
      const listed = await fetch(urls.vestibule, {
        method: "POST",
        headers: HEADERS,
        body: BODIES["tools/list"],
      });
      const listBytes = new Uint8Array(await listed.arrayBuffer());
      const { result } = JSON.parse(new TextDecoder().decode(listBytes));
      if (result?.nextCursor !== undefined) throw new Error("the catalogue must fit one page");
      await Deno.writeFile(`${dir}/tools_list.json`, listBytes);
      await Deno.writeTextFile(
        `${dir}/routes.json`,
        JSON.stringify([{
          path: "/mcp",
          headers: [["content-type", "application/json"]],
          file: `${dir}/tools_list.json`,
        }]),
      );
      await Deno.writeTextFile(`${dir}/tools.json`, JSON.stringify(result.tools));

      servers.bare = await startServerProcess({
        command: [
          Deno.execPath(),
          "run",
          "-A",
          "bench/baseline_server.ts",
          String(barePort),
          `${dir}/routes.json`,
        ],
        readyUrl: urls.bare,
      });
      servers.sdk = await startServerProcess({
        command: [
          "node",
          "bench/mcp_sdk_server.mjs",
          String(sdkPort),
          `${dir}/tools.json`,
          SDK_DIR,
        ],
        readyUrl: `http://127.0.0.1:${sdkPort}/ready`,
      });
      await _sameCatalogue(urls.sdk, result.tools);

      const rows: string[][] = [];
      const verdicts: string[] = [];
      for (const method of Object.keys(BODIES) as Method[]) {
        const script = `${dir}/${method.replace("/", "_")}.lua`;
        await Deno.writeTextFile(script, _luaScript(BODIES[method]));
        const runs: Record<Name, Run[]> = { vestibule: [], sdk: [], bare: [] };
        const order: Name[] = ["bare", "vestibule", "sdk"];
        for (const name of order) await _wrk(servers[name]!, urls[name], script, 1, connections);
        for (let round = 0; round < ROUNDS; round++) {
          for (const name of order) {
            runs[name].push(await _wrk(servers[name]!, urls[name], script, seconds, connections));
          }
        }
        const m = {
          vestibule: _median(runs.vestibule),
          sdk: _median(runs.sdk),
          bare: _median(runs.bare),
        };
        const vsSdk = m.vestibule.requestsPerSecond / m.sdk.requestsPerSecond;
        const vsBare = m.vestibule.requestsPerSecond / m.bare.requestsPerSecond;
        for (const name of order) {
          const errors = runs[name].reduce((n, r) => n + r.errors, 0);
          rows.push([
            method,
            name,
            m[name].requestsPerSecond.toFixed(0),
            m[name].p99Ms.toFixed(2),
            m[name].cpuMicros.toFixed(1),
            name === "vestibule"
              ? "1.000"
              : (m.vestibule.requestsPerSecond / m[name].requestsPerSecond).toFixed(3),
            String(errors),
          ]);
        }
        const cpuVsBare = m.bare.cpuMicros / m.vestibule.cpuMicros;
        const lowerP99 = m.vestibule.p99Ms < m.sdk.p99Ms && m.vestibule.p99Ms < m.bare.p99Ms;
        verdicts.push(
          `${method}: ${vsSdk.toFixed(1)}x SDK (>= 100: ${vsSdk >= 100 ? "ok" : "BELOW"}), ` +
            `${vsBare.toFixed(3)}x bare (>= 0.8: ${vsBare >= 0.8 ? "ok" : "BELOW"}), ` +
            `p99 ${m.vestibule.p99Ms.toFixed(2)} ms vs SDK ${m.sdk.p99Ms.toFixed(2)} / bare ` +
            `${m.bare.p99Ms.toFixed(2)} (lower than both: ${lowerP99 ? "ok" : "NO"}); ` +
            `server CPU per request ${cpuVsBare.toFixed(3)}x bare's efficiency`,
        );
      }
      const rss = {
        vestibule: await servers.vestibule.peakRssKib(),
        sdk: await servers.sdk.peakRssKib(),
        bare: await servers.bare.peakRssKib(),
      };
      const memoryRatio = rss.vestibule / rss.bare;
      console.log(
        `load: wrk, ${connections} connections, ${seconds}s per run, median of ${ROUNDS} ` +
          `alternating rounds; ${result.tools.length} tools, ${listBytes.byteLength} bytes of tools/list\n`,
      );
      console.log(
        table(["method", "server", "req/s", "p99 ms", "CPU µs/req", "vestibule/x", "errors"], rows),
      );
      console.log("");
      for (const line of verdicts) console.log(line);
      console.log(
        `peak RSS: vestibule ${_mib(rss.vestibule)}, SDK (Node) ${_mib(rss.sdk)}, bare ${
          _mib(rss.bare)
        }; ` +
          `vestibule/bare ${memoryRatio.toFixed(2)} (<= 1.3: ${
            memoryRatio <= 1.3 ? "ok" : "ABOVE"
          })`,
      );
    } finally {
      for (const server of Object.values(servers)) await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

/** The SDK for Node, installed once into a gitignored cache. */
async function _ensureSdk(): Promise<void> {
  try {
    const pkg = JSON.parse(await Deno.readTextFile(`${SDK_DIR}/package.json`));
    if (pkg.version === SDK_VERSION) return;
  } catch {
    // not installed yet
  }
  await Deno.mkdir(SDK_CACHE, { recursive: true });
  const install = await new Deno.Command("npm", {
    args: [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefix",
      SDK_CACHE.pathname,
      `@modelcontextprotocol/sdk@${SDK_VERSION}`,
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!install.success) {
    throw new Error(
      `npm install of the MCP SDK failed: ${new TextDecoder().decode(install.stderr)}`,
    );
  }
}

/** The comparison is only fair if the SDK serves exactly our catalogue. */
async function _sameCatalogue(url: string, tools: unknown[]): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: HEADERS,
    body: BODIES["tools/list"],
  });
  const body = await response.json();
  if (JSON.stringify(body.result?.tools) !== JSON.stringify(tools)) {
    throw new Error(
      `the SDK server does not serve the same tools: ${JSON.stringify(body).slice(0, 300)}`,
    );
  }
}

function _luaScript(body: string): string {
  const lines = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(body)}`];
  for (const [name, value] of Object.entries(HEADERS)) {
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  return lines.join("\n") + "\n";
}

/** A wrk run, with the server's CPU time per request (steady even when the machine is shared). */
interface Run extends LoadResult {
  readonly cpuMicros: number;
}

async function _wrk(
  server: ServerProcess,
  url: string,
  script: string,
  seconds: number,
  connections: number,
): Promise<Run> {
  const cpuBefore = await server.cpuSeconds();
  const output = await new Deno.Command("wrk", {
    args: ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const cpu = (await server.cpuSeconds()) - cpuBefore;
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  const text = new TextDecoder().decode(output.stdout);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  return { tool: "wrk", ...parseWrkOutput(text), cpuMicros: (cpu / requests) * 1e6 };
}

function _median(runs: readonly Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function _mib(kib: number): string {
  return `${(kib / 1024).toFixed(1)} MiB`;
}
