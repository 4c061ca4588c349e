/**
 * MCP section: `initialize` and `tools/list` in 2025-11-25, and `tools/list` in 2026-07-28
 * (its `_meta`, `Mcp-Method` header and longer answer), on the onboarding endpoint of the real
 * server (bench/vestibule_server.ts, rate limits off) against, in the same run,
 *  - the official MCP TypeScript SDK's stateless Streamable HTTP server on Node
 *    (bench/mcp_sdk_server.mjs) serving the same tools with the same schemas, JSON answers
 *    (2025 methods only: SDK 1.x speaks no 2026-07-28);
 *  - a bare Deno.serve answering every POST with the precomputed tools/list bytes of the
 *    method's revision (bench/baseline_server.ts), the limit for this design.
 * Each server runs in its own process; wrk (with a small Lua script for the POST) drives
 * them in alternating rounds (every method and server in each round) and the median round is
 * reported, with peak RSS (VmHWM).
 * Targets (issue 3): >= 100x the SDK's requests/s, >= 0.8x bare, lower p99 than both,
 * peak memory <= 1.3x bare. Issue 14: tools/list in 2026-07-28 costs no more than in
 * 2025-11-25.
 */
import process from "node:process";
import { createService } from "../src/app.ts";
import { resolveConfig } from "../src/config/config.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./main.ts";
import { type LoadResult, parseWrkOutput, wrkAvailable } from "./load.ts";
import { type ServerProcess, startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";

const ROUNDS = 3;
const SDK_VERSION = "1.32.2";
const SDK_CACHE = new URL("../.ci/cache/mcp-sdk-node/", import.meta.url);
const SDK_DIR = new URL("node_modules/@modelcontextprotocol/sdk", SDK_CACHE).pathname;

const JSON_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
};
const LEGACY_HEADERS = { ...JSON_HEADERS, "MCP-Protocol-Version": "2025-11-25" };

/** One measured exchange: its request, and where the bare server keeps its answer. */
interface Method {
  readonly label: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly barePath: string;
  /** Whether the SDK server (1.x, 2025 revisions only) takes part. */
  readonly sdk: boolean;
}

const LIST_2025: Method = {
  label: "tools/list 2025-11-25",
  headers: LEGACY_HEADERS,
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  barePath: "/mcp",
  sdk: true,
};
const LIST_2026: Method = {
  label: "tools/list 2026-07-28",
  headers: { ...JSON_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list" },
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  }),
  barePath: "/mcp-2026",
  sdk: false,
};
const METHODS: readonly Method[] = [
  {
    label: "initialize",
    headers: LEGACY_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
    barePath: "/mcp",
    sdk: true,
  },
  LIST_2025,
  LIST_2026,
];

type Name = "vestibule" | "sdk" | "bare";

export default {
  name: "mcp",
  async run({ seconds, connections }) {
    if (!(await wrkAvailable())) throw new Error("the mcp section needs wrk (apt-get install wrk)");
    await _ensureSdk();
    const [base, auth, api, barePort, sdkPort] = freePorts(5);
    const urls: Record<Name, string> = {
      vestibule: `http://127.0.0.1:${auth}/mcp`,
      bare: `http://127.0.0.1:${barePort}`,
      sdk: `http://127.0.0.1:${sdkPort}/mcp`,
    };
    const urlOf = (name: Name, method: Method) =>
      name === "bare" ? `${urls.bare}${method.barePath}` : urls[name];
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
      // The bare server answers each revision's tools/list with Vestibule's very bytes.
      const pages: Record<string, Uint8Array> = {};
      for (const method of [LIST_2025, LIST_2026]) {
        const listed = await fetch(urls.vestibule, {
          method: "POST",
          headers: method.headers,
          body: method.body,
        });
        pages[method.barePath] = new Uint8Array(await listed.arrayBuffer());
      }
      const listBytes = pages[LIST_2025.barePath]!;
      const { result } = JSON.parse(new TextDecoder().decode(listBytes));
      if (result?.nextCursor !== undefined) throw new Error("the catalogue must fit one page");
      const routes = [];
      for (const [path, bytes] of Object.entries(pages)) {
        const file = `${dir}/tools_list${path.replaceAll("/", "_")}.json`;
        await Deno.writeFile(file, bytes);
        routes.push({ path, headers: [["content-type", "application/json"]], file });
      }
      await Deno.writeTextFile(`${dir}/routes.json`, JSON.stringify(routes));
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
        readyUrl: `${urls.bare}/mcp`,
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

      const order: Name[] = ["bare", "vestibule", "sdk"];
      const serversOf = (method: Method) => order.filter((name) => name !== "sdk" || method.sdk);
      const scripts = new Map<Method, string>();
      for (const method of METHODS) {
        const script = `${dir}/${method.label.replace(/\W+/g, "_")}.lua`;
        await Deno.writeTextFile(script, _luaScript(method));
        scripts.set(method, script);
        for (const name of serversOf(method)) {
          await _wrk(servers[name]!, urlOf(name, method), script, 1, connections);
        }
      }
      // Every method and server in each round, so a change in the machine's load hits all.
      const runs = new Map<Method, Partial<Record<Name, Run[]>>>(
        METHODS.map((method) => [method, {}]),
      );
      for (let round = 0; round < ROUNDS; round++) {
        for (const method of METHODS) {
          for (const name of serversOf(method)) {
            const run = await _wrk(
              servers[name]!,
              urlOf(name, method),
              scripts.get(method)!,
              seconds,
              connections,
            );
            (runs.get(method)![name] ??= []).push(run);
          }
        }
      }

      const rows: string[][] = [];
      const verdicts: string[] = [];
      const medians = new Map<Method, Partial<Record<Name, Run>>>();
      for (const method of METHODS) {
        const m: Partial<Record<Name, Run>> = {};
        for (const name of serversOf(method)) m[name] = _median(runs.get(method)![name]!);
        medians.set(method, m);
        const v = m.vestibule!;
        for (const name of serversOf(method)) {
          const errors = runs.get(method)![name]!.reduce((n, r) => n + r.errors, 0);
          rows.push([
            method.label,
            name,
            m[name]!.requestsPerSecond.toFixed(0),
            m[name]!.p99Ms.toFixed(2),
            m[name]!.cpuMicros.toFixed(1),
            (v.requestsPerSecond / m[name]!.requestsPerSecond).toFixed(3),
            String(errors),
          ]);
        }
        const vsBare = v.requestsPerSecond / m.bare!.requestsPerSecond;
        const cpuVsBare = m.bare!.cpuMicros / v.cpuMicros;
        if (m.sdk === undefined) {
          verdicts.push(
            `${method.label}: ${vsBare.toFixed(3)}x bare (>= 0.8: ${
              vsBare >= 0.8 ? "ok" : "BELOW"
            }), ` +
              `p99 ${v.p99Ms.toFixed(2)} ms vs bare ${m.bare!.p99Ms.toFixed(2)}; ` +
              `server CPU per request ${cpuVsBare.toFixed(3)}x bare's efficiency`,
          );
          continue;
        }
        const vsSdk = v.requestsPerSecond / m.sdk.requestsPerSecond;
        const lowerP99 = v.p99Ms < m.sdk.p99Ms && v.p99Ms < m.bare!.p99Ms;
        verdicts.push(
          `${method.label}: ${vsSdk.toFixed(1)}x SDK (>= 100: ${vsSdk >= 100 ? "ok" : "BELOW"}), ` +
            `${vsBare.toFixed(3)}x bare (>= 0.8: ${vsBare >= 0.8 ? "ok" : "BELOW"}), ` +
            `p99 ${v.p99Ms.toFixed(2)} ms vs SDK ${m.sdk.p99Ms.toFixed(2)} / bare ` +
            `${m.bare!.p99Ms.toFixed(2)} (lower than both: ${lowerP99 ? "ok" : "NO"}); ` +
            `server CPU per request ${cpuVsBare.toFixed(3)}x bare's efficiency`,
        );
      }
      const inProcess = await _inProcess([LIST_2026, LIST_2025]);
      const old = medians.get(LIST_2025)!.vestibule!;
      const neu = medians.get(LIST_2026)!.vestibule!;
      const noMore = neu.cpuMicros <= old.cpuMicros;
      verdicts.push(
        `tools/list 2026-07-28 against 2025-11-25: ${
          (neu.requestsPerSecond / old.requestsPerSecond).toFixed(3)
        }x the requests/s, CPU ${neu.cpuMicros.toFixed(1)} against ${
          old.cpuMicros.toFixed(1)
        } µs per request (no more: ${noMore ? "ok" : "ABOVE"}); answers of ${
          pages[LIST_2026.barePath]!.byteLength
        } against ${listBytes.byteLength} bytes; in process, the handler ${
          inProcess.map((us) => us.toFixed(1)).join(" against ")
        } CPU µs per request (${(inProcess[0]! / inProcess[1]!).toFixed(3)}x)`,
      );
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

/**
 * The onboarding handler called in this process, without sockets: the median CPU µs per
 * request of each method over alternating batches (Request objects made beforehand), steadier
 * than wrk when other work shares the machine.
 */
async function _inProcess(methods: readonly Method[]): Promise<number[]> {
  const origin = "http://127.0.0.1:1";
  const config = resolveConfig({
    VESTIBULE_BASE_URL: "http://127.0.0.1:2",
    VESTIBULE_AUTH_URL: origin,
    VESTIBULE_API_URL: "http://127.0.0.1:3",
    VESTIBULE_DATA: ":memory:",
    VESTIBULE_RATE_LIMITS: "off",
  });
  const log = () => {};
  const service = await createService(config, { log, mailLog: log, now: Date.now });
  try {
    const { handler } = service;
    const context = { clientAddress: "127.0.0.1" };
    // Requests are made before the clock starts: building one costs more than serving it.
    const batch = async (method: Method, count: number) => {
      const requests = Array.from({ length: count }, () =>
        new Request(`${origin}/mcp`, {
          method: "POST",
          headers: method.headers,
          body: method.body,
        }));
      const before = process.cpuUsage();
      for (const request of requests) await (await handler(request, context)).text();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / count;
    };
    for (const method of methods) await batch(method, 20_000);
    const samples = methods.map(() => [] as number[]);
    // The order alternates too: the second batch of a round pays the first one's garbage.
    for (let round = 0; round < 60; round++) {
      const order = round % 2 === 0 ? [...methods.keys()] : [...methods.keys()].reverse();
      for (const i of order) samples[i]!.push(await batch(methods[i]!, 1_000));
    }
    return samples.map((s) => [...s].sort((a, b) => a - b)[s.length >> 1]!);
  } finally {
    await service.close();
  }
}

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
    headers: LIST_2025.headers,
    body: LIST_2025.body,
  });
  const body = await response.json();
  if (JSON.stringify(body.result?.tools) !== JSON.stringify(tools)) {
    throw new Error(
      `the SDK server does not serve the same tools: ${JSON.stringify(body).slice(0, 300)}`,
    );
  }
}

function _luaScript(method: Method): string {
  const lines = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(method.body)}`];
  for (const [name, value] of Object.entries(method.headers)) {
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
