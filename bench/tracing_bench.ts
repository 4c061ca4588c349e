/**
 * Tracing section: what VESTIBULE_OTEL=on costs. Two Vestibule servers run as users run them
 * (bench/as_run.ts: the start task, rate limits off, each its own KV file), one with tracing off
 * and one exporting over OTLP/HTTP protobuf to a local collector (bench/otlp_sink_server.ts);
 * both in front of the same tiny upstream. Two endpoints: a public read (`GET {base_url}/`) and
 * the gateway (tools/call `tiny__add` through the workspace endpoint). Alternating one-second
 * slices (off, on, off, …) so that machine noise hits both; each pair of neighbouring slices
 * gives a ratio, and the medians are reported with the CPU µs per request of each server.
 * Vestibule and the upstream are pinned to CPU 0, wrk and the collector to CPU 1.
 */
import { loadAverage, removeStore, seedStore, startTaskCommand } from "./as_run.ts";
import type { BenchSection } from "./main.ts";
import { table } from "./table.ts";
import { runScriptedWrk, wrkAvailable, wrkScript } from "./load.ts";
import { type ServerProcess, startServerProcess } from "./processes.ts";
import { freePorts } from "../testkit/ports.ts";

const ROOT = new URL("../", import.meta.url);
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const SLICE_SECONDS = 1;
const MCP_HEADERS = {
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
  "MCP-Protocol-Version": "2025-11-25",
};
const MODES = ["off", "on"] as const;
type Mode = (typeof MODES)[number];
const ENDPOINTS = ["public read", "gateway"] as const;
type Endpoint = (typeof ENDPOINTS)[number];

export default {
  name: "tracing",
  async run({ seconds, connections }) {
    if (!(await wrkAvailable())) throw new Error("the tracing section needs wrk");
    const [tinyPort, sinkPort, ...ports] = freePorts(2 + 3 * MODES.length);
    const runId = crypto.randomUUID();
    const tinyUrl = `http://127.0.0.1:${tinyPort}/mcp`;
    const sinkUrl = `http://127.0.0.1:${sinkPort}`;
    const upstreamsFile = `data/bench-${runId}-upstreams.json`;
    const envs = Object.fromEntries(MODES.map((mode, i) => {
      const [base, auth, api] = ports.slice(i * 3, i * 3 + 3);
      return [mode, {
        VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
        VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
        VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
        VESTIBULE_RATE_LIMITS: "off",
        VESTIBULE_DATA: `data/bench-${runId}-${mode}.kv`,
        VESTIBULE_UPSTREAMS: upstreamsFile,
      }];
    })) as unknown as Record<Mode, Record<string, string>>;
    const dir = await Deno.makeTempDir({ prefix: "vestibule-tracing-bench-" });
    const servers: ServerProcess[] = [];
    try {
      await Deno.writeTextFile(
        new URL(upstreamsFile, ROOT),
        JSON.stringify({ upstreams: [{ name: "tiny", url: tinyUrl }] }),
      );
      const tokens = {} as Record<Mode, string>;
      for (const mode of MODES) {
        tokens[mode] = await seedStore(envs[mode], ["app.access", "upstream.tiny"]);
      }
      const deno = (script: string, port: number) => [
        Deno.execPath(),
        "run",
        "--allow-net=127.0.0.1",
        script,
        String(port),
      ];
      servers.push(
        await startServerProcess({
          command: deno("bench/tiny_upstream_server.ts", tinyPort!),
          readyUrl: `http://127.0.0.1:${tinyPort}/health`,
          cpu: SERVER_CPU,
        }),
        await startServerProcess({
          command: deno("bench/otlp_sink_server.ts", sinkPort!),
          readyUrl: `${sinkUrl}/health`,
          cpu: LOAD_CPU,
        }),
      );
      const vestibule = {} as Record<Mode, ServerProcess>;
      for (const mode of MODES) {
        vestibule[mode] = await startServerProcess({
          command: await startTaskCommand(),
          env: {
            ...envs[mode],
            ...(mode === "on"
              ? { VESTIBULE_OTEL: "on", OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }
              : {}),
          },
          readyUrl: `${envs[mode].VESTIBULE_BASE_URL}/health`,
          stdoutFile: "/dev/null",
          cpu: SERVER_CPU,
        });
        servers.push(vestibule[mode]);
      }
      const scripts = {} as Record<`${Mode} ${Endpoint}`, { url: string; script: string }>;
      for (const mode of MODES) {
        const env = envs[mode];
        const read = `${dir}/${mode}-read.lua`;
        await Deno.writeTextFile(read, wrkScript({ method: "GET", headers: {} }));
        scripts[`${mode} public read`] = { url: `${env.VESTIBULE_BASE_URL}/`, script: read };
        const call = `${dir}/${mode}-gateway.lua`;
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "tiny__add", arguments: { a: 1, b: 2 } },
        });
        await Deno.writeTextFile(
          call,
          wrkScript({
            method: "POST",
            headers: { ...MCP_HEADERS, Authorization: `Bearer ${tokens[mode]}` },
            body,
          }),
        );
        scripts[`${mode} gateway`] = { url: `${env.VESTIBULE_API_URL}/api/mcp`, script: call };
        // The gateway must answer from the upstream before anything is measured.
        for (let tries = 0;; tries++) {
          const response = await fetch(`${env.VESTIBULE_API_URL}/api/mcp`, {
            method: "POST",
            headers: { ...MCP_HEADERS, Authorization: `Bearer ${tokens[mode]}` },
            body,
          });
          const text = await response.text();
          if (text.includes('"3"') || text.includes(":3")) break;
          if (tries > 50) throw new Error(`${mode}: the gateway does not call tiny__add: ${text}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      const slice = (mode: Mode, endpoint: Endpoint, level: number) =>
        runScriptedWrk({
          ...scripts[`${mode} ${endpoint}`],
          seconds: SLICE_SECONDS,
          connections: level,
          cpu: LOAD_CPU,
          servers: [vestibule[mode]],
        });
      const count = Math.max(3, Math.round(seconds / SLICE_SECONDS));
      const rows: string[][] = [];
      const ratios: string[] = [];
      for (const endpoint of ENDPOINTS) {
        for (const level of [...new Set([1, connections])]) {
          for (const mode of MODES) await slice(mode, endpoint, level); // warm-up
          const runs: Record<Mode, Awaited<ReturnType<typeof slice>>[]> = { off: [], on: [] };
          for (let i = 0; i < count; i++) {
            for (const mode of MODES) runs[mode].push(await slice(mode, endpoint, level));
          }
          for (const mode of MODES) {
            rows.push([
              endpoint,
              String(level),
              mode,
              _median(runs[mode].map((r) => r.requestsPerSecond)).toFixed(0),
              (_median(runs[mode].map((r) => r.p50Ms)) * 1000).toFixed(0),
              (_median(runs[mode].map((r) => r.p99Ms)) * 1000).toFixed(0),
              _median(runs[mode].map((r) => r.cpuMicros[0]!)).toFixed(1),
              String(runs[mode].reduce((n, r) => n + r.errors, 0)),
            ]);
          }
          const ratio = _median(
            runs.off.map((off, i) => runs.on[i]!.requestsPerSecond / off.requestsPerSecond),
          );
          const cpu = _median(
            runs.off.map((off, i) => runs.on[i]!.cpuMicros[0]! - off.cpuMicros[0]!),
          );
          ratios.push(
            `${endpoint}, ${level} connection${level === 1 ? "" : "s"}: on/off ${
              ratio.toFixed(3)
            } req/s, ${cpu >= 0 ? "+" : ""}${cpu.toFixed(1)} CPU µs/req`,
          );
        }
      }
      const sink = await (await fetch(`${sinkUrl}/health`)).json();
      console.log(
        `load: wrk and the collector on CPU ${LOAD_CPU}, Vestibule and the upstream on CPU ` +
          `${SERVER_CPU}; ${count} alternating ${SLICE_SECONDS}s slices per mode, medians; the ` +
          `collector took ${sink.exports} exports, ${sink.bytes} bytes; load average at the end ` +
          `${await loadAverage()}\n`,
      );
      console.log(table(
        ["endpoint", "connections", "tracing", "req/s", "p50 µs", "p99 µs", "CPU µs/req", "errors"],
        rows,
      ));
      console.log("\n" + ratios.join("\n"));
    } finally {
      for (const server of servers.reverse()) await server.stop();
      for (const mode of MODES) await removeStore(envs[mode]);
      await Deno.remove(new URL(upstreamsFile, ROOT)).catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
} satisfies BenchSection;

function _median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
