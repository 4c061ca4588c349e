/**
 * As-run section: Vestibule started with `deno task start`'s very command and permissions
 * (read from deno.json), its request log going to a file as under a service manager (or to
 * /dev/null with `--no-log`), rate limits off, a KV file store holding one account, business
 * and access token; against a bare Deno.serve (bench/baseline_server.ts) sending the same
 * bytes. Before anything is measured, one raw HTTP/1.1 exchange with each server per endpoint
 * must give the same status line, header lines (in order) and body, the values of `date` and
 * `x-request-id` aside; the run fails otherwise. The servers are pinned to CPU 0 and wrk to
 * CPU 1 (taskset); rounds alternate between every endpoint and server, the median is reported
 * with the server's CPU time per request (from /proc), the steadier figure on a shared machine.
 * Each ratio is the median of the rounds' own ratios (runs a few seconds apart), so that the
 * machine's slower and faster spells meet both sides of it alike.
 * A third server, the floor (the bare one reading Host and stamping a fresh X-Request-Id on each
 * answer, `baseline_server.ts … stamp`), shows what Vestibule's contract alone costs in Deno.
 *
 * Targets (issue 15), each a ratio of requests/s in this one run: /health, /index.json
 * (identity and gzip) and onboarding tools/list >= 0.85x bare (for tools/list, the minimal
 * handler that checks the headers and parses the body); workspace tools/list with a valid
 * token >= 0.8x onboarding; peak RSS <= 1.5x bare. Idle RSS and start to first 200 are stated.
 */
import {
  benchDataPath,
  loadAverage,
  logLines,
  measureRefreshes,
  nodeBinary,
  removeStore,
  seedRefreshChains,
  seedStore,
  startTaskCommand,
} from "./as_run.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import {
  type Answer,
  type Exchange,
  expectSameBytes,
  payloadOf,
  rawExchange,
} from "./raw_exchange.ts";
import { type LoadResult, runScriptedWrk, wrkAvailable, wrkScript } from "./load.ts";
import { type ServerProcess, startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";
const ROUNDS = 3;
const SERVER_CPU = 0;
const LOAD_CPU = 1;
/** Set by the HTTP engine from the body, on both servers. */
const FRAMING = new Set(["date", "content-length", "connection", "transfer-encoding"]);

const MCP_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};
const TOOLS_LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

type Origin = "base" | "auth" | "api";

interface Endpoint {
  readonly label: string;
  readonly origin: Origin;
  readonly path: string;
  /** The bare server's path for the same answer (one path per distinct answer). */
  readonly barePath: string;
  readonly method: "GET" | "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** What the ratio is taken against, and its target. */
  readonly against: "bare" | "onboarding";
  readonly target: number;
  readonly needsToken?: boolean;
}

const ENDPOINTS: readonly Endpoint[] = [
  {
    label: "GET /health",
    origin: "base",
    path: "/health",
    barePath: "/health",
    method: "GET",
    headers: {},
    against: "bare",
    target: 0.85,
  },
  {
    label: "GET /index.json",
    origin: "base",
    path: "/index.json",
    barePath: "/index.json",
    method: "GET",
    headers: {},
    against: "bare",
    target: 0.85,
  },
  {
    label: "GET /index.json gzip",
    origin: "base",
    path: "/index.json",
    barePath: "/index.json.gz",
    method: "GET",
    headers: { "Accept-Encoding": "gzip" },
    against: "bare",
    target: 0.85,
  },
  {
    label: "onboarding tools/list",
    origin: "auth",
    path: "/mcp",
    barePath: "/mcp",
    method: "POST",
    headers: MCP_HEADERS,
    body: TOOLS_LIST,
    against: "bare",
    target: 0.85,
  },
  {
    label: "workspace tools/list",
    origin: "api",
    path: "/api/mcp",
    barePath: "",
    method: "POST",
    headers: MCP_HEADERS,
    body: TOOLS_LIST,
    against: "onboarding",
    target: 0.8,
    needsToken: true,
  },
];

type Name = "bare" | "floor" | "vestibule";

interface Run extends LoadResult {
  readonly cpuMicros: number;
}

export default {
  name: "as-run",
  async run({ seconds, connections, requestLog, runtime }) {
    if (!(await wrkAvailable())) throw new Error("the as-run section needs wrk");
    const [base, auth, api, barePort, floorPort] = freePorts(5);
    const origins: Record<Origin, string> = {
      base: `http://127.0.0.1:${base}`,
      auth: `http://127.0.0.1:${auth}`,
      api: `http://127.0.0.1:${api}`,
    };
    const env = {
      VESTIBULE_BASE_URL: origins.base,
      VESTIBULE_AUTH_URL: origins.auth,
      VESTIBULE_API_URL: origins.api,
      VESTIBULE_RATE_LIMITS: "off",
      VESTIBULE_DATA: benchDataPath(runtime),
    };
    const dir = await Deno.makeTempDir({ prefix: "vestibule-as-run-" });
    const logFile = requestLog ? `${dir}/vestibule.log` : "/dev/null";
    const servers: Partial<Record<Name, ServerProcess>> = {};
    try {
      const token = await seedStore(env, ["app.access"]);
      const chains = await seedRefreshChains(env, connections);
      servers.vestibule = await startServerProcess({
        command: await startTaskCommand(runtime),
        env,
        readyUrl: `${origins.base}/health`,
        stdoutFile: logFile,
        cpu: SERVER_CPU,
      });
      const requestOf = (endpoint: Endpoint): Exchange => ({
        url: new URL(endpoint.path, origins[endpoint.origin]),
        method: endpoint.method,
        headers: endpoint.needsToken
          ? { ...endpoint.headers, Authorization: `Bearer ${token}` }
          : endpoint.headers,
        ...(endpoint.body === undefined ? {} : { body: endpoint.body }),
      });
      // The bare server's routes: Vestibule's own answers, header lines in order.
      const routes = [];
      const answers = new Map<Endpoint, Answer>();
      for (const endpoint of ENDPOINTS) {
        const answer = await rawExchange(requestOf(endpoint));
        if (answer.status !== "HTTP/1.1 200 OK") {
          throw new Error(`${endpoint.label}: ${answer.status}`);
        }
        answers.set(endpoint, answer);
        if (endpoint.against !== "bare") continue;
        const file = `${dir}/${endpoint.barePath.replaceAll(/\W/g, "_")}`;
        await Deno.writeFile(file, payloadOf(answer));
        routes.push({
          path: endpoint.barePath,
          // Node.js sends a Content-Length only where the answer names one: it stays a header.
          headers: answer.headers.filter(([name]) =>
            !FRAMING.has(name) || (runtime === "node" && name === "content-length")
          ),
          file,
          mcp: endpoint.method === "POST",
        });
      }
      await Deno.writeTextFile(`${dir}/routes.json`, JSON.stringify(routes));
      const bareOrigins = {
        bare: `http://127.0.0.1:${barePort}`,
        floor: `http://127.0.0.1:${floorPort}`,
      };
      for (const name of ["bare", "floor"] as const) {
        servers[name] = await startServerProcess({
          // On the runtime Vestibule runs on.
          command: [
            ...(runtime === "node" ? [nodeBinary(), "bench/baseline_server_node.mjs"] : [
              Deno.execPath(),
              "run",
              "--allow-net=127.0.0.1",
              `--allow-read=${dir}`,
              "bench/baseline_server.ts",
            ]),
            new URL(bareOrigins[name]).port,
            `${dir}/routes.json`,
            ...(name === "floor" ? ["stamp"] : []),
          ],
          readyUrl: `${bareOrigins[name]}/health`,
          cpu: SERVER_CPU,
        });
      }
      const exchangeOf = (endpoint: Endpoint, name: Name): Exchange =>
        name === "vestibule" ? requestOf(endpoint) : {
          ...requestOf(endpoint),
          url: new URL(endpoint.barePath, bareOrigins[name]),
        };
      const measured = ENDPOINTS.map((endpoint) => ({
        endpoint,
        servers:
          (endpoint.against === "bare" ? ["bare", "floor", "vestibule"] : ["vestibule"]) as Name[],
      }));
      for (const { endpoint } of measured) {
        if (endpoint.against !== "bare") continue;
        for (const name of ["bare", "floor"] as const) {
          expectSameBytes(
            `${endpoint.label} (${name})`,
            answers.get(endpoint)!,
            await rawExchange(exchangeOf(endpoint, name)),
          );
        }
      }
      const idle = {
        vestibule: await servers.vestibule.rssKib(),
        bare: await servers.bare!.rssKib(),
      };

      const scripts = new Map<string, string>();
      const wrkOf = async (endpoint: Endpoint, name: Name, seconds: number) => {
        const exchange = exchangeOf(endpoint, name);
        const key = `${endpoint.label} ${name}`;
        if (!scripts.has(key)) {
          const script = `${dir}/${key.replaceAll(/\W+/g, "_")}.lua`;
          await Deno.writeTextFile(script, wrkScript(exchange));
          scripts.set(key, script);
        }
        return await _wrk(servers[name]!, exchange.url, scripts.get(key)!, seconds, connections);
      };
      for (const { endpoint, servers: names } of measured) {
        for (const name of names) await wrkOf(endpoint, name, 1);
      }
      const runs = new Map<string, Run[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const { endpoint, servers: names } of measured) {
          for (const name of names) {
            const key = `${endpoint.label} ${name}`;
            runs.set(key, [...runs.get(key) ?? [], await wrkOf(endpoint, name, seconds)]);
          }
        }
      }
      const rows = _rows(measured.map((m) => m.endpoint), runs);
      const peak = {
        vestibule: await servers.vestibule.peakRssKib(),
        bare: await servers.bare!.peakRssKib(),
      };
      const resident = {
        vestibule: await servers.vestibule.residentKib(),
        bare: await servers.bare!.residentKib(),
      };
      const tokens = await measureRefreshes(
        servers.vestibule,
        origins.auth,
        chains,
        seconds,
        connections,
      );
      const logged = requestLog ? await logLines(logFile) : NaN;
      console.log(
        `Vestibule on ${runtime === "node" ? "Node.js" : "Deno"} (${
          (await startTaskCommand(runtime))[0]
        }), the bare and floor servers on the same runtime; ` +
          `load: wrk on CPU ${LOAD_CPU}, servers on CPU ${SERVER_CPU}, ${connections} connections, ` +
          `${seconds}s per run, median of ${ROUNDS} alternating rounds; request log ${
            requestLog ? `to a file (${logged} lines written)` : "to /dev/null"
          }; load average at the end ${await loadAverage()}\n`,
      );
      console.log(_table(rows));
      _printFooter({
        peak,
        idle,
        resident,
        startMs: { vestibule: servers.vestibule.startMs, bare: servers.bare!.startMs },
        tokens,
        connections,
        seconds,
      });
    } finally {
      for (const server of Object.values(servers)) await server.stop();
      await removeStore(env);
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

async function _wrk(
  server: ServerProcess,
  url: URL,
  script: string,
  seconds: number,
  connections: number,
): Promise<Run> {
  const run = await runScriptedWrk({
    url: url.href,
    script,
    seconds,
    connections,
    cpu: LOAD_CPU,
    servers: [server],
  });
  return { ...run, cpuMicros: run.cpuMicros[0]! };
}

/** The middle one of an odd number of values (ROUNDS), ordered by `by`. */
function _median<T>(values: readonly T[], by: (value: T) => number): T {
  return [...values].sort((a, b) => by(a) - by(b))[Math.floor(values.length / 2)]!;
}

/** The table's rows: each endpoint's medians, its round-paired ratio and target, errors. */
function _rows(endpoints: readonly Endpoint[], runs: ReadonlyMap<string, Run[]>): string[][] {
  const median = (endpoint: Endpoint, name: Name) =>
    _median(runs.get(`${endpoint.label} ${name}`)!, (run) => run.requestsPerSecond);
  const onboarding = ENDPOINTS.find((e) => e.label === "onboarding tools/list")!;
  // Vestibule's requests/s over the reference's, round by round; the median of those.
  const paired = (endpoint: Endpoint, of: Endpoint, name: Name) => {
    const references = runs.get(`${of.label} ${name}`)!;
    return _median(
      runs.get(`${endpoint.label} vestibule`)!.map((run, round) =>
        run.requestsPerSecond / references[round]!.requestsPerSecond
      ),
      (ratio) => ratio,
    );
  };
  return endpoints.map((endpoint) => {
    const v = median(endpoint, "vestibule");
    const reference = endpoint.against === "bare"
      ? median(endpoint, "bare")
      : median(onboarding, "vestibule");
    const ratio = endpoint.against === "bare"
      ? paired(endpoint, endpoint, "bare")
      : paired(endpoint, onboarding, "vestibule");
    const errors = [...runs.entries()]
      .filter(([key]) => key.startsWith(`${endpoint.label} `))
      .reduce((n, [, r]) => n + r.reduce((m, run) => m + run.errors, 0), 0);
    const bare = endpoint.against === "bare" ? reference : undefined;
    const floor = endpoint.against === "bare" ? median(endpoint, "floor") : undefined;
    return [
      endpoint.label,
      bare?.requestsPerSecond.toFixed(0) ?? "",
      bare?.cpuMicros.toFixed(1) ?? "",
      floor?.requestsPerSecond.toFixed(0) ?? "",
      floor?.cpuMicros.toFixed(1) ?? "",
      v.requestsPerSecond.toFixed(0),
      v.cpuMicros.toFixed(1),
      v.p99Ms.toFixed(2),
      `${ratio.toFixed(3)} of ${endpoint.against}`,
      `${endpoint.target}: ${ratio >= endpoint.target ? "ok" : "BELOW"}`,
      floor ? paired(endpoint, endpoint, "floor").toFixed(3) : "",
      String(errors),
    ];
  });
}

function _table(rows: readonly string[][]): string {
  return table(
    [
      "endpoint",
      "bare req/s",
      "CPU µs/req",
      "floor req/s",
      "CPU µs/req",
      "vestibule req/s",
      "CPU µs/req",
      "p99 ms",
      "ratio",
      "target",
      "of floor",
      "errors",
    ],
    rows,
  );
}

/** Memory, start and the token endpoint, below the table. */
function _printFooter(figures: {
  readonly peak: { readonly vestibule: number; readonly bare: number };
  readonly idle: { readonly vestibule: number; readonly bare: number };
  readonly resident: Readonly<Record<"vestibule" | "bare", { anonymous: number; files: number }>>;
  readonly startMs: { readonly vestibule: number; readonly bare: number };
  readonly tokens: { perSecond: number; p99Ms: number; cpuMicros: number; errors: number };
  readonly connections: number;
  readonly seconds: number;
}): void {
  const { peak, idle, resident, startMs, tokens, connections, seconds } = figures;
  const rssRatio = peak.vestibule / peak.bare;
  console.log(
    `\npeak RSS: vestibule ${_mib(peak.vestibule)}, bare ${_mib(peak.bare)}: ${
      rssRatio.toFixed(2)
    }x (<= 1.5: ${rssRatio <= 1.5 ? "ok" : "ABOVE"}); idle RSS: vestibule ${
      _mib(idle.vestibule)
    }, bare ${_mib(idle.bare)}; start to first 200: vestibule ${
      startMs.vestibule.toFixed(0)
    } ms, bare ${startMs.bare.toFixed(0)} ms`,
  );
  console.log(
    `token endpoint (refresh with rotation, a Deno client, ${connections} ` +
      `chains, ${seconds}s): ${tokens.perSecond.toFixed(0)}/s, p99 ${
        tokens.p99Ms.toFixed(1)
      } ms, Vestibule CPU ${tokens.cpuMicros.toFixed(0)} µs per refresh, ${tokens.errors} errors`,
  );
  console.log(
    `resident after the load: vestibule ${_mib(resident.vestibule.anonymous)} allocated and ${
      _mib(resident.vestibule.files)
    } of mapped files (the runtime executable's pages), bare ${_mib(resident.bare.anonymous)} and ${
      _mib(resident.bare.files)
    }`,
  );
}

function _mib(kib: number): string {
  return `${(kib / 1024).toFixed(1)} MiB`;
}
