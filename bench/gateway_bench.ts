/**
 * Gateway section: tools/call of the tiny upstream's `add` (bench/tiny_upstream_server.ts:
 * legacy era with sessions), once from an upstream answering JSON (`tiny`) and once from one
 * answering an event stream (`tinysse`, the official SDK's default), each (a) direct, in the
 * session a real client opens, and (b) through the workspace endpoint as `tiny__add` /
 * `tinysse__add`, with a token of `app.access` and both upstreams' scopes; Vestibule run as users
 * run it (bench/as_run.ts: the start task on Deno, or `npm start`'s command with `--runtime=node`,
 * the request log to a file, audit as built, rate limits on at their defaults, which this load
 * stays under) and told of the upstreams by VESTIBULE_UPSTREAMS. At 1 and `--connections`
 * connections, in one run of interleaved one-second slices (direct, floor, gateway, direct, … for
 * each answer kind in turn) so that machine noise hits all; each pair of neighbouring slices gives
 * a ratio and the latency added, and the medians are reported. The servers are pinned to CPU 0
 * and wrk to CPU 1, so the gateway's cost shows as the CPU it takes from the upstream's core.
 * The floor (bench/floor_proxy.ts, in the same runtime) is Vestibule's HTTP server and upstream
 * client with nothing between them: what any proxy built of them pays on this machine, so the
 * gap to it is what Vestibule's own work per call costs.
 *
 * Targets (issue 41): >= 0.35x direct at 1 connection and >= 0.20x at 32; Vestibule's CPU per
 * call <= 200 µs at 1 connection and <= 80 µs at 32; an event-stream upstream costing at most
 * 1.2x the CPU per call of a JSON one. Reference: a Rust MCP proxy published 0.54x and 0.40x,
 * adding about 50 µs p50 at 1 connection.
 */
import {
  benchDataPath,
  loadAverage,
  logLines,
  removeStore,
  seedStore,
  startTaskCommand,
} from "./as_run.ts";
import type { BenchRuntime, BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { runScriptedWrk, wrkAvailable, wrkScript } from "./load.ts";
import { type ServerProcess, startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";
import { HEAP_FLAGS } from "../deploy/node_flags.mjs";
import { LEGACY_VERSION, openLegacySession } from "./legacy_session.ts";

const ROOT = new URL("../", import.meta.url);
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const SLICE_SECONDS = 1;
/**
 * Load on each proxy's path before anything is counted: Node.js took 12–20 s of calls to reach
 * its steady CPU per call (its optimizing compiler and heap settling), Deno a few.
 */
const WARM_UP_SECONDS = 10;
const FLOOR = "bench/floor_proxy.ts";
/** Interleaved slices per cell, at the least (issue 41: five or more). */
const MIN_SLICES = 5;
/** The targets' ratio to direct, and CPU µs per call, by connections. */
const TARGET_RATIO: ReadonlyMap<number, number> = new Map([[1, 0.35], [32, 0.20]]);
const TARGET_CPU: ReadonlyMap<number, number> = new Map([[1, 200], [32, 80]]);
const TARGET_STREAM_COST = 1.2;
/** Calls a minute (and burst) of the workspace's and each upstream's limit: the most a file takes. */
const RATE_LIMIT = 1_000_000;
const MCP_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": LEGACY_VERSION,
};
/** The upstreams, by how they answer. */
const ANSWERS = ["json", "sse"] as const;
type AnswerKind = typeof ANSWERS[number];
const UPSTREAM_NAME: Record<AnswerKind, string> = { json: "tiny", sse: "tinysse" };

type Path = `${"direct" | "floor" | "gateway"} ${AnswerKind}`;

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
  /** CPU µs per request of the proxy measured (Vestibule, or the floor). */
  readonly proxyCpu: number;
}

export default {
  name: "gateway",
  async run({ seconds, connections, requestLog, runtime }) {
    if (!(await wrkAvailable())) {
      throw new Error("the gateway section needs wrk (apt-get install wrk)");
    }
    const [base, auth, api, ...ports] = freePorts(7);
    const tinyPorts = ports.slice(0, ANSWERS.length);
    const floorPorts = ports.slice(ANSWERS.length);
    const env = {
      VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
      VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
      VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
      VESTIBULE_DATA: benchDataPath(runtime),
      // On, as users run it, but above what this load asks: every call still takes its tokens.
      VESTIBULE_RATE_LIMITS: `workspace=${RATE_LIMIT}:${RATE_LIMIT}`,
    };
    const upstreamsFile = `data/bench-${crypto.randomUUID()}-upstreams.json`;
    const tiny = (answer: AnswerKind, path: string) =>
      `http://127.0.0.1:${tinyPorts[ANSWERS.indexOf(answer)]}${path}`;
    const dir = await Deno.makeTempDir({ prefix: "vestibule-gateway-bench-" });
    const logFile = requestLog ? `${dir}/vestibule.log` : "/dev/null";
    const upstreams: ServerProcess[] = [];
    const floors = new Map<AnswerKind, ServerProcess>();
    let vestibule: ServerProcess | null = null;
    try {
      const token = await seedStore(env, [
        "app.access",
        ...ANSWERS.map((answer) => `upstream.${UPSTREAM_NAME[answer]}`),
      ]);
      await Deno.writeTextFile(
        new URL(upstreamsFile, ROOT),
        JSON.stringify({
          upstreams: ANSWERS.map((answer) => ({
            name: UPSTREAM_NAME[answer],
            url: tiny(answer, "/mcp"),
            rateLimit: { perMinute: RATE_LIMIT, burst: RATE_LIMIT },
          })),
        }),
      );
      // The upstreams first: the gateway may list their tools as it starts.
      for (const answer of ANSWERS) {
        upstreams.push(
          await startServerProcess({
            command: [
              Deno.execPath(),
              "run",
              "--allow-net=127.0.0.1",
              "bench/tiny_upstream_server.ts",
              new URL(tiny(answer, "/")).port,
              answer,
            ],
            readyUrl: tiny(answer, "/health"),
            cpu: SERVER_CPU,
          }),
        );
      }
      for (const answer of ANSWERS) {
        const port = floorPorts[ANSWERS.indexOf(answer)]!;
        floors.set(
          answer,
          await startServerProcess({
            command: await _floorCommand(runtime),
            env: {
              FLOOR_PORT: String(port),
              FLOOR_UPSTREAM: tiny(answer, "/mcp"),
              FLOOR_PREFIX: `${UPSTREAM_NAME[answer]}__`,
            },
            readyUrl: `http://127.0.0.1:${port}/`,
            cpu: SERVER_CPU,
          }),
        );
      }
      vestibule = await startServerProcess({
        command: await startTaskCommand(runtime),
        env: { ...env, VESTIBULE_UPSTREAMS: upstreamsFile },
        readyUrl: `${env.VESTIBULE_BASE_URL}/health`,
        stdoutFile: logFile,
        cpu: SERVER_CPU,
      });
      const targets = {} as Record<Path, Target>;
      for (const answer of ANSWERS) {
        targets[`direct ${answer}`] = {
          url: tiny(answer, "/mcp"),
          method: "POST",
          headers: {
            ...MCP_HEADERS,
            "Mcp-Session-Id": await openLegacySession(
              (body, session) =>
                fetch(tiny(answer, "/mcp"), {
                  method: "POST",
                  headers: { ...MCP_HEADERS, ...(session ? { "Mcp-Session-Id": session } : {}) },
                  body,
                }),
              "vestibule-bench",
            ),
          },
          body: _call("add"),
        };
        targets[`floor ${answer}`] = {
          url: `http://127.0.0.1:${floorPorts[ANSWERS.indexOf(answer)]}/mcp`,
          method: "POST",
          headers: MCP_HEADERS,
          body: _call(`${UPSTREAM_NAME[answer]}__add`),
        };
        targets[`gateway ${answer}`] = {
          url: `${env.VESTIBULE_API_URL}/api/mcp`,
          method: "POST",
          headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}` },
          body: _call(`${UPSTREAM_NAME[answer]}__add`),
        };
      }
      await _expectListed(
        targets["gateway json"],
        ANSWERS.map((answer) => `${UPSTREAM_NAME[answer]}__add`),
      );
      const paths = Object.keys(targets) as Path[];
      const scripts = {} as Record<Path, string>;
      for (const path of paths) {
        await _expectSum(path, targets[path]);
        scripts[path] = `${dir}/${path.replace(" ", "-")}.lua`;
        await Deno.writeTextFile(scripts[path], wrkScript(targets[path]));
      }
      // Every answer counted must be the upstream's: a gateway answering a tool error of its own
      // (a limit, an outage) would look fast.
      const callsSoFar = async (answer: AnswerKind) =>
        (await (await fetch(tiny(answer, "/health"))).json()).calls as number;
      const slice = async (
        path: Path,
        connections: number,
        seconds = SLICE_SECONDS,
      ): Promise<Slice> => {
        const answer = path.endsWith("sse") ? "sse" : "json";
        const proxy = path.startsWith("floor") ? floors.get(answer)! : vestibule!;
        const before = await callsSoFar(answer);
        const run = await runScriptedWrk({
          url: targets[path].url,
          script: scripts[path],
          seconds,
          connections,
          cpu: LOAD_CPU,
          servers: [proxy],
        });
        // Calls still in flight when wrk stops reach the upstream without being counted.
        const forwarded = await callsSoFar(answer) - before;
        return {
          ...run,
          unforwarded: Math.max(0, run.requests - forwarded),
          proxyCpu: run.cpuMicros[0]!,
        };
      };
      const levels = [...new Set([1, connections])];
      const count = Math.max(MIN_SLICES, Math.round(seconds / SLICE_SECONDS));
      const slices = new Map<number, Record<Path, Slice[]>>();
      for (const path of paths) {
        if (!path.startsWith("direct")) await slice(path, connections, WARM_UP_SECONDS);
      }
      for (const level of levels) {
        for (const path of paths) await slice(path, level); // warm-up, not counted
        const measured = Object.fromEntries(paths.map((path) => [path, []])) as unknown as Record<
          Path,
          Slice[]
        >;
        for (let i = 0; i < count; i++) {
          for (const path of paths) measured[path].push(await slice(path, level));
        }
        slices.set(level, measured);
      }

      const logged = requestLog ? await logLines(logFile) : NaN;
      await _report(slices, { runtime, count, logged });
    } finally {
      await vestibule?.stop();
      for (const server of [...floors.values(), ...upstreams]) await server.stop();
      await removeStore(env);
      await Deno.remove(new URL(upstreamsFile, ROOT)).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

/** The issue's table from the slices, with the targets and the event stream's cost. */
async function _report(
  slices: ReadonlyMap<number, Record<Path, Slice[]>>,
  run: { readonly runtime: BenchRuntime; readonly count: number; readonly logged: number },
): Promise<void> {
  const { runtime, count, logged } = run;
  const levels = [...slices.keys()];
  console.log(
    `Vestibule on ${runtime === "node" ? "Node.js" : "Deno"} (${
      (await startTaskCommand(runtime))[0]
    }); wrk on CPU ${LOAD_CPU}, the tiny upstreams (Deno), the floor proxies and Vestibule on CPU ${SERVER_CPU}; ` +
      `${WARM_UP_SECONDS}s of warm-up per proxy path, then ${count} interleaved ${SLICE_SECONDS}s slices per cell, medians; request log ${
        Number.isNaN(logged) ? "to /dev/null" : `to a file (${logged} lines written)`
      }; load average at the end ${await loadAverage()}\n`,
  );
  const rows: string[][] = [];
  const cpuPerCall = new Map<string, number>();
  for (const [level, measured] of slices) {
    for (const answer of ANSWERS) {
      const direct = measured[`direct ${answer}`];
      const floor = measured[`floor ${answer}`];
      const gateway = measured[`gateway ${answer}`];
      const pairs = direct.map((d, i) => [d, gateway[i]!] as const);
      const ratio = _median(pairs.map(([d, g]) => g.requestsPerSecond / d.requestsPerSecond));
      const floorRatio = _median(
        direct.map((d, i) => floor[i]!.requestsPerSecond / d.requestsPerSecond),
      );
      const cpu = _median(gateway.map((r) => r.proxyCpu));
      cpuPerCall.set(`${level} ${answer}`, cpu);
      rows.push([
        String(level),
        answer === "sse" ? "event stream" : "JSON",
        _median(direct.map((r) => r.requestsPerSecond)).toFixed(0),
        `${_median(floor.map((r) => r.requestsPerSecond)).toFixed(0)} (${floorRatio.toFixed(3)})`,
        _median(gateway.map((r) => r.requestsPerSecond)).toFixed(0),
        ratio.toFixed(3) + _verdict(ratio >= (TARGET_RATIO.get(level) ?? 0)),
        _micros(_median(pairs.map(([d, g]) => g.p50Ms - d.p50Ms))),
        _micros(_median(pairs.map(([d, g]) => g.p99Ms - d.p99Ms))),
        cpu.toFixed(0) + _verdict(cpu <= (TARGET_CPU.get(level) ?? Infinity)),
        _median(floor.map((r) => r.proxyCpu)).toFixed(0),
        String([...direct, ...floor, ...gateway].reduce((n, r) => n + r.errors, 0)),
        String(gateway.reduce((n, r) => n + r.unforwarded, 0)),
      ]);
    }
  }
  console.log(table(
    [
      "connections",
      "upstream answers",
      "direct req/s",
      "floor req/s (ratio)",
      "gateway req/s",
      "ratio",
      "added p50 µs",
      "added p99 µs",
      "Vestibule CPU µs/call",
      "floor CPU µs/call",
      "errors",
      "unforwarded",
    ],
    rows,
  ));
  console.log(
    `\ntargets: ratio >= ${[...TARGET_RATIO].map(([c, r]) => `${r} at ${c}`).join(", ")}; ` +
      `CPU per call <= ${[...TARGET_CPU].map(([c, r]) => `${r} µs at ${c}`).join(", ")}`,
  );
  for (const level of levels) {
    const cost = cpuPerCall.get(`${level} sse`)! / cpuPerCall.get(`${level} json`)!;
    console.log(
      `${level} connection${level === 1 ? "" : "s"}: an event-stream upstream costs ${
        cost.toFixed(2)
      }x the CPU per call of a JSON one (target <= ${TARGET_STREAM_COST}${
        _verdict(cost <= TARGET_STREAM_COST)
      })`,
    );
  }
}

/** The floor in the runtime measured, with Vestibule's heap flags. */
async function _floorCommand(runtime: BenchRuntime): Promise<string[]> {
  const [executable, ...start] = await startTaskCommand(runtime);
  if (runtime === "node") {
    return [executable!, "--disable-warning=ExperimentalWarning", ...HEAP_FLAGS, FLOOR];
  }
  return [
    executable!,
    "run",
    ...start.filter((arg) => arg.startsWith("--v8-flags=")),
    "--allow-net=127.0.0.1",
    "--allow-env=FLOOR_PORT,FLOOR_UPSTREAM,FLOOR_PREFIX",
    FLOOR,
  ];
}

function _verdict(met: boolean): string {
  return met ? "" : " (missed)";
}

function _call(name: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: { a: 1, b: 2 } },
  });
}

/** The workspace endpoint must list every tool measured, or the gateway half means nothing. */
async function _expectListed(target: Target, wanted: readonly string[]): Promise<void> {
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
  const missing = wanted.filter((name) => !names.includes(name));
  if (missing.length > 0) {
    throw new Error(
      `the workspace endpoint lists ${names.length} tools, not ${missing.join(", ")} ` +
        "(VESTIBULE_UPSTREAMS was not read, or an upstream did not answer)",
    );
  }
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
    // An event stream's last data line is the answer.
    const json = response.headers.get("content-type")?.startsWith("text/event-stream")
      ? text.split("\n").filter((line) => line.startsWith("data: ")).at(-1)!.slice(6)
      : text;
    const { result } = JSON.parse(json);
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
