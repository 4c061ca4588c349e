/**
 * Site section: Vestibule (rate limits off, request log to a no-op) against a bare
 * Deno.serve returning the very same bytes, for /health and /index.json. Each server runs
 * in its own process; runs alternate between them, and the median of the rounds is
 * reported. Target (issue 2): Vestibule >= 0.85x the baseline's requests/s on both paths.
 */
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { type LoadResult, runLoad } from "./load.ts";
import { freePorts, startServerProcess } from "./processes.ts";

const ROUNDS = 3;
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
    let baseline;
    try {
      // The baseline serves exactly what Vestibule sends (identity encoding, as wrk asks).
      const routes: string[] = [];
      for (const path of PATHS) {
        const response = await fetch(`${baseUrl}${path}`, {
          headers: { "Accept-Encoding": "identity" },
        });
        const file = `${dir}/${path.replaceAll("/", "_")}`;
        await Deno.writeFile(file, new Uint8Array(await response.arrayBuffer()));
        routes.push(`${path}|${response.headers.get("Content-Type")}|${file}`);
      }
      const baselineUrl = `http://127.0.0.1:${baselinePort}`;
      baseline = await startServerProcess({
        command: [
          Deno.execPath(),
          "run",
          "-A",
          "bench/baseline_server.ts",
          String(baselinePort),
          ...routes,
        ],
        readyUrl: `${baselineUrl}/health`,
      });
      const rows: string[][] = [];
      for (const path of PATHS) {
        const runs = { baseline: [] as LoadResult[], vestibule: [] as LoadResult[] };
        // Warm both up (JIT, connection pools) before anything is measured.
        await runLoad({ url: `${baselineUrl}${path}`, seconds: 1, connections });
        await runLoad({ url: `${baseUrl}${path}`, seconds: 1, connections });
        for (let round = 0; round < ROUNDS; round++) {
          runs.baseline.push(await runLoad({ url: `${baselineUrl}${path}`, seconds, connections }));
          runs.vestibule.push(await runLoad({ url: `${baseUrl}${path}`, seconds, connections }));
        }
        const b = _median(runs.baseline);
        const v = _median(runs.vestibule);
        const ratio = v.requestsPerSecond / b.requestsPerSecond;
        const errors = [...runs.baseline, ...runs.vestibule].reduce((n, r) => n + r.errors, 0);
        rows.push([
          path,
          b.requestsPerSecond.toFixed(0),
          b.p99Ms.toFixed(2),
          v.requestsPerSecond.toFixed(0),
          v.p99Ms.toFixed(2),
          ratio.toFixed(3),
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
          "vestibule req/s",
          "p99 ms",
          "ratio",
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

/** The run with the median requests/s, reported with its own p99. */
function _median(runs: readonly LoadResult[]): LoadResult {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}
