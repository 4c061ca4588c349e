/**
 * Gateway section: tools/call of the tiny upstream's `add` (bench/tiny_upstream_server.ts:
 * legacy era with sessions, JSON answers), (a) direct, in the session a real client opens, and
 * (b) through the workspace endpoint as `tiny__add`, with a token of `app.access` and
 * `upstream.tiny`; Vestibule run as users run it (bench/as_run.ts: the start task, its request
 * log to a file, audit as built, rate limits off) and told of the upstream by VESTIBULE_UPSTREAMS.
 * At 1 and `--connections` connections, in one run of alternating one-second slices (direct,
 * gateway, direct, …) so that machine noise hits both; each pair of neighbouring slices gives a
 * ratio and the latency added, and the medians are reported. Both servers are pinned to CPU 0
 * and wrk to CPU 1, so the gateway's cost shows as the CPU it takes from the upstream's core.
 *
 * Reference: a Rust MCP proxy published 0.54x direct requests/s at 1 connection and 0.40x at
 * 32, adding about 50 µs p50 at 1 connection. Target: ahead of that ratio at both.
 *
 * Until the gateway is in the build the workspace endpoint does not list `tiny__add`: the
 * section says so and measures direct alone.
 */
import { loadAverage, logLines, removeStore, seedStore, startTaskCommand } from "./as_run.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { runScriptedWrk, wrkAvailable, wrkScript } from "./load.ts";
import { freePorts, type ServerProcess, startServerProcess } from "./processes.ts";

const ROOT = new URL("../", import.meta.url);
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const SLICE_SECONDS = 1;
/** The Rust proxy's published requests/s ratio to direct, by connections. */
const REFERENCE_RATIO: ReadonlyMap<number, number> = new Map([[1, 0.54], [32, 0.40]]);
const REFERENCE_ADDED_P50_MICROS = 50;
const VERSION = "2025-11-25";
const MCP_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": VERSION,
};

type Path = "direct" | "gateway";

interface Target {
  readonly url: string;
  readonly method: "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

interface Slice {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** Answers that came without a call reaching the upstream (a tool error made by the gateway). */
  readonly unforwarded: number;
  /** CPU µs per request of the tiny upstream, then of Vestibule. */
  readonly cpuMicros: readonly number[];
}

export default {
  name: "gateway",
  async run({ seconds, connections, requestLog }) {
    if (!(await wrkAvailable())) {
      throw new Error("the gateway section needs wrk (apt-get install wrk)");
    }
    const [base, auth, api, tinyPort] = freePorts(4);
    const runId = crypto.randomUUID();
    const env = {
      VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
      VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
      VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
      VESTIBULE_RATE_LIMITS: "off",
      // Inside data/, the one folder the start task may write (and read, besides static/).
      VESTIBULE_DATA: `data/bench-${runId}.kv`,
    };
    const upstreamsFile = `data/bench-${runId}-upstreams.json`;
    const tinyUrl = `http://127.0.0.1:${tinyPort}/mcp`;
    const tinyHealth = `http://127.0.0.1:${tinyPort}/health`;
    const dir = await Deno.makeTempDir({ prefix: "vestibule-gateway-bench-" });
    const logFile = requestLog ? `${dir}/vestibule.log` : "/dev/null";
    const servers: ServerProcess[] = [];
    try {
      const token = await seedStore(env, ["app.access", "upstream.tiny"]);
      await Deno.writeTextFile(
        new URL(upstreamsFile, ROOT),
        JSON.stringify({ upstreams: [{ name: "tiny", url: tinyUrl }] }),
      );
      // The upstream first: the gateway may list its tools as it starts.
      servers.push(
        await startServerProcess({
          command: [
            Deno.execPath(),
            "run",
            "--allow-net=127.0.0.1",
            "bench/tiny_upstream_server.ts",
            String(tinyPort),
          ],
          readyUrl: tinyHealth,
          cpu: SERVER_CPU,
        }),
      );
      servers.push(
        await startServerProcess({
          command: await startTaskCommand(),
          env: { ...env, VESTIBULE_UPSTREAMS: upstreamsFile },
          readyUrl: `${env.VESTIBULE_BASE_URL}/health`,
          stdoutFile: logFile,
          cpu: SERVER_CPU,
        }),
      );
      const targets: Record<Path, Target> = {
        direct: {
          url: tinyUrl,
          method: "POST",
          headers: { ...MCP_HEADERS, "Mcp-Session-Id": await _openSession(tinyUrl) },
          body: _call("add"),
        },
        gateway: {
          url: `${env.VESTIBULE_API_URL}/api/mcp`,
          method: "POST",
          headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}` },
          body: _call("tiny__add"),
        },
      };
      await _expectSum("direct", targets.direct);
      const missing = await _gatewayMissing(targets.gateway);
      if (missing === null) await _expectSum("gateway", targets.gateway);
      else console.log(`gateway half missing: ${missing}; measuring direct alone\n`);
      const paths: readonly Path[] = missing === null ? ["direct", "gateway"] : ["direct"];

      const scripts = {} as Record<Path, string>;
      for (const path of paths) {
        scripts[path] = `${dir}/${path}.lua`;
        await Deno.writeTextFile(scripts[path], wrkScript(targets[path]));
      }
      // Every answer counted must be the upstream's: a gateway answering a tool error of its own
      // (a limit, an outage) would look fast.
      const callsSoFar = async () => (await (await fetch(tinyHealth)).json()).calls as number;
      const slice = async (path: Path, connections: number): Promise<Slice> => {
        const before = await callsSoFar();
        const run = await runScriptedWrk({
          url: targets[path].url,
          script: scripts[path],
          seconds: SLICE_SECONDS,
          connections,
          cpu: LOAD_CPU,
          servers,
        });
        // Calls still in flight when wrk stops reach the upstream without being counted.
        return { ...run, unforwarded: Math.max(0, run.requests - (await callsSoFar() - before)) };
      };
      const levels = [...new Set([1, connections])];
      const count = Math.max(3, Math.round(seconds / SLICE_SECONDS));
      const slices = new Map<number, Record<Path, Slice[]>>();
      for (const level of levels) {
        for (const path of paths) await slice(path, level); // warm-up, not counted
        const measured: Record<Path, Slice[]> = { direct: [], gateway: [] };
        for (let i = 0; i < count; i++) {
          for (const path of paths) measured[path].push(await slice(path, level));
        }
        slices.set(level, measured);
      }

      const logged = requestLog ? await logLines(logFile) : NaN;
      console.log(
        `load: wrk on CPU ${LOAD_CPU}, tiny upstream and Vestibule on CPU ${SERVER_CPU}; ` +
          `${count} alternating ${SLICE_SECONDS}s slices per path and connection count, ` +
          `medians; request log ${
            requestLog ? `to a file (${logged} lines written)` : "to /dev/null"
          }; load average at the end ${await loadAverage()}\n`,
      );
      const rows: string[][] = [];
      for (const [level, measured] of slices) {
        for (const path of paths) {
          const runs = measured[path];
          rows.push([
            String(level),
            path,
            _median(runs.map((r) => r.requestsPerSecond)).toFixed(0),
            _micros(_median(runs.map((r) => r.p50Ms))),
            _micros(_median(runs.map((r) => r.p99Ms))),
            _median(runs.map((r) => r.cpuMicros[0]!)).toFixed(1),
            path === "gateway" ? _median(runs.map((r) => r.cpuMicros[1]!)).toFixed(1) : "",
            String(runs.reduce((n, r) => n + r.errors, 0)),
            String(runs.reduce((n, r) => n + r.unforwarded, 0)),
          ]);
        }
      }
      console.log(table(
        [
          "connections",
          "path",
          "req/s",
          "p50 µs",
          "p99 µs",
          "tiny CPU µs/req",
          "vestibule CPU µs/req",
          "errors",
          "unforwarded",
        ],
        rows,
      ));
      console.log("");
      if (missing !== null) {
        console.log("gateway/direct: not measured (the gateway half is missing, see above)");
        return;
      }
      for (const [level, { direct, gateway }] of slices) {
        const pairs = direct.map((d, i) => [d, gateway[i]!] as const);
        const ratio = _median(pairs.map(([d, g]) => g.requestsPerSecond / d.requestsPerSecond));
        const p50 = _median(pairs.map(([d, g]) => g.p50Ms - d.p50Ms));
        const p99 = _median(pairs.map(([d, g]) => g.p99Ms - d.p99Ms));
        const reference = REFERENCE_RATIO.get(level);
        console.log(
          `${level} connection${level === 1 ? "" : "s"}: gateway/direct ${ratio.toFixed(3)}` +
            (reference === undefined
              ? ""
              : ` (Rust proxy ${reference}: ${ratio > reference ? "ahead" : "BEHIND"})`) +
            `; added p50 ${_micros(p50)} µs` +
            (level === 1 ? ` (Rust proxy about ${REFERENCE_ADDED_P50_MICROS} µs)` : "") +
            `, added p99 ${_micros(p99)} µs`,
        );
      }
    } finally {
      for (const server of servers.reverse()) await server.stop();
      await removeStore(env);
      await Deno.remove(new URL(upstreamsFile, ROOT)).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

function _call(name: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: { a: 1, b: 2 } },
  });
}

/** The legacy handshake a real client makes: initialize, then notifications/initialized. */
async function _openSession(url: string): Promise<string> {
  const opened = await fetch(url, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: VERSION,
        capabilities: {},
        clientInfo: { name: "vestibule-bench", version: "1" },
      },
    }),
  });
  await opened.body?.cancel();
  const sessionId = opened.headers.get("mcp-session-id");
  if (opened.status !== 200 || sessionId === null) {
    throw new Error(`tiny upstream initialize: ${opened.status}, no session id`);
  }
  const initialized = await fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, "Mcp-Session-Id": sessionId },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await initialized.body?.cancel();
  if (initialized.status !== 202) {
    throw new Error(`tiny upstream notifications/initialized: ${initialized.status}`);
  }
  return sessionId;
}

/** Null when the workspace endpoint lists `tiny__add`, else why the gateway is not measured. */
async function _gatewayMissing(target: Target): Promise<string | null> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const response = await fetch(target.url, {
      method: "POST",
      headers: target.headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        ...(cursor === undefined ? {} : { params: { cursor } }),
      }),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`workspace tools/list: ${response.status}`);
    }
    const { result } = await response.json();
    names.push(...result.tools.map((tool: { name: string }) => tool.name));
    cursor = result.nextCursor;
  } while (cursor !== undefined);
  return names.includes("tiny__add")
    ? null
    : `the workspace endpoint lists ${names.length} tools, ` +
      "none of them tiny__add (no gateway in this build, or VESTIBULE_UPSTREAMS was not read)";
}

/** The fair comparison needs both paths to answer the call, and alike: sum 3, no error. */
async function _expectSum(label: string, target: Target): Promise<void> {
  const response = await fetch(target.url, {
    method: "POST",
    headers: target.headers,
    body: target.body,
  });
  const text = await response.text();
  let sum: unknown;
  try {
    const { result } = JSON.parse(text);
    sum = result.isError === true ? undefined : result.structuredContent?.sum;
  } catch {
    // reported below
  }
  if (response.status !== 200 || sum !== 3) {
    throw new Error(`${label} tools/call: ${response.status} ${text.slice(0, 500)}`);
  }
}

function _median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function _micros(ms: number): string {
  return (ms * 1000).toFixed(0);
}
