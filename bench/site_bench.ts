/**
 * Site section: Vestibule (rate limits off, request log to a no-op) against a bare
 * Deno.serve returning the very same bytes (status line, headers and body, prepared once and
 * cloned per request), for /health and /index.json. Each server runs
 * in its own process; runs alternate between them, and the median of the rounds is
 * reported. Target (issue 2): Vestibule >= 0.85x the baseline's requests/s on both paths.
 * On a shared machine requests/s swing with the neighbours' load, so the server's own CPU
 * time per request is reported too: the steadier measure of what Vestibule adds.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { type LoadResult, runLoad } from "./load.ts";
import { freePorts, type ServerProcess, startServerProcess } from "./processes.ts";

const ROUNDS = 3;
/** Set by Deno.serve itself on every response. */
const _FRAMING = new Set(["content-length", "date", "transfer-encoding", "connection"]);
const PATHS = ["/health", "/index.json"] as const;
const TARGET = 0.85;

export default {
  name: "site",
  async run({ seconds, connections }) {
    const [base, auth, api, baselinePort] = freePorts(4);
    const baseUrl = `http://127.0.0.1:${base}`;
    const vestibule = await startServerProcess({
      command: [Deno.execPath(), "run", "-A", "bench/vestibule_server.ts"],
      env: {
        VESTIBULE_BASE_URL: baseUrl,
        VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
        VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
        VESTIBULE_DATA: ":memory:",
        VESTIBULE_RATE_LIMITS: "off",
      },
      readyUrl: `${baseUrl}/health`,
    });
    const dir = await Deno.makeTempDir({ prefix: "vestibule-bench-" });
    let baseline: ServerProcess | undefined;
    try {
      // The baseline sends exactly what Vestibule sends, headers included, so the difference
      // is Vestibule's own machinery: Host routing, the route table, request log, validators.
      const routes = [];
      for (const path of PATHS) {
        // wrk sends no Accept-Encoding, so both answer with the identity bytes.
        const response = await fetch(`${baseUrl}${path}`, {
          headers: { "Accept-Encoding": "identity" },
        });
        const file = `${dir}/${path.replaceAll("/", "_")}`;
        await Deno.writeFile(file, new Uint8Array(await response.arrayBuffer()));
        const headers = [...response.headers].filter(([name]) => !_FRAMING.has(name));
        routes.push({ path, headers, file });
      }
      await Deno.writeTextFile(`${dir}/routes.json`, JSON.stringify(routes));
      const baselineUrl = `http://127.0.0.1:${baselinePort}`;
      baseline = await startServerProcess({
        command: [
          Deno.execPath(),
          "run",
          "-A",
          "bench/baseline_server.ts",
          String(baselinePort),
          `${dir}/routes.json`,
        ],
        readyUrl: `${baselineUrl}/health`,
      });
      const rows: string[][] = [];
      const measure = async (server: ServerProcess, url: string): Promise<Run> => {
        const before = await server.cpuSeconds();
        const result = await runLoad({ url, seconds, connections });
        const cpu = await server.cpuSeconds() - before;
        return { ...result, cpuMicros: cpu * 1e6 / (result.requestsPerSecond * seconds) };
      };
      for (const path of PATHS) {
        const runs = { baseline: [] as Run[], vestibule: [] as Run[] };
        // Warm both up (JIT, connection pools) before anything is measured.
        await runLoad({ url: `${baselineUrl}${path}`, seconds: 1, connections });
        await runLoad({ url: `${baseUrl}${path}`, seconds: 1, connections });
        for (let round = 0; round < ROUNDS; round++) {
          runs.baseline.push(await measure(baseline, `${baselineUrl}${path}`));
          runs.vestibule.push(await measure(vestibule, `${baseUrl}${path}`));
        }
        const b = _median(runs.baseline);
        const v = _median(runs.vestibule);
        const ratio = v.requestsPerSecond / b.requestsPerSecond;
        const cpuB = _medianOf(runs.baseline.map((r) => r.cpuMicros));
        const cpuV = _medianOf(runs.vestibule.map((r) => r.cpuMicros));
        const errors = [...runs.baseline, ...runs.vestibule].reduce((n, r) => n + r.errors, 0);
        rows.push([
          path,
          b.requestsPerSecond.toFixed(0),
          b.p99Ms.toFixed(2),
          cpuB.toFixed(1),
          v.requestsPerSecond.toFixed(0),
          v.p99Ms.toFixed(2),
          cpuV.toFixed(1),
          ratio.toFixed(3),
          (cpuB / cpuV).toFixed(3),
          ratio >= TARGET ? "ok" : "BELOW",
          String(errors),
        ]);
      }
      const tool = (await runLoad({ url: `${baseUrl}/health`, seconds: 1, connections: 1 })).tool;
      console.log(
        `load: ${tool}, ${connections} connections, ${seconds}s per run, median of ${ROUNDS} alternating rounds`,
      );
      console.log(
        `peak RSS: vestibule ${await vestibule.peakRssKib()} KiB, baseline ${await baseline
          .peakRssKib()} KiB\n`,
      );
      console.log(table(
        [
          "path",
          "baseline req/s",
          "p99 ms",
          "CPU us/req",
          "vestibule req/s",
          "p99 ms",
          "CPU us/req",
          "req/s ratio",
          "CPU ratio",
          `>= ${TARGET}`,
          "errors",
        ],
        rows,
      ));
    } finally {
      await vestibule.stop();
      await baseline?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

interface Run extends LoadResult {
  /** Server CPU time per request, in microseconds. */
  readonly cpuMicros: number;
}

function _medianOf(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** The run with the median requests/s, reported with its own p99. */
function _median<T extends LoadResult>(runs: readonly T[]): T {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}
