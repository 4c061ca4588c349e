/**
 * Load generation for the benchmarks: wrk (Debian's package) when it is installed and the
 * request is a plain GET, otherwise a small Deno client. Both report requests/s and p99.
 * Run the server under test in another process (see bench/processes.ts) so that the load
 * generator never shares its JavaScript thread.
 */
import type { ServerProcess } from "./processes.ts";

export interface LoadOptions {
  readonly url: string;
  readonly seconds: number;
  /** Concurrent keep-alive connections. */
  readonly connections: number;
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Force the Deno client even when wrk is present. */
  readonly client?: "wrk" | "deno";
}

export interface LoadResult {
  readonly tool: "wrk" | "deno";
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Non-2xx/3xx answers and socket errors; a run with errors is not a fair measurement. */
  readonly errors: number;
}

let _wrkPresent: boolean | undefined;

export async function wrkAvailable(): Promise<boolean> {
  if (_wrkPresent === undefined) {
    try {
      // `wrk --version` exits 1 after printing its banner: being runnable is what counts.
      await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" })
        .output();
      _wrkPresent = true;
    } catch {
      _wrkPresent = false;
    }
  }
  return _wrkPresent;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const method = options.method ?? "GET";
  const wrk = options.client !== "deno" && method === "GET" && options.body === undefined &&
    await wrkAvailable();
  if (options.client === "wrk" && !wrk) {
    throw new Error("wrk was asked for but cannot run this request");
  }
  return wrk ? await _runWrk(options) : await _runDenoClient(options);
}

/** Lua-free wrk: one thread per core the generator may use, `--latency` for the percentiles. */
async function _runWrk(options: LoadOptions): Promise<LoadResult> {
  const args = [
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--latency",
    ...Object.entries(options.headers ?? {}).flatMap((
      [name, value],
    ) => ["-H", `${name}: ${value}`]),
    options.url,
  ];
  const output = await new Deno.Command("wrk", { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  return { tool: "wrk", ...parseWrkOutput(text) };
}

/** Extracts requests/s, p50, p99 and errors from `wrk --latency` output. */
export function parseWrkOutput(text: string): Omit<LoadResult, "tool"> {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const percentile = (p: number) => {
    const found = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, "m").exec(text);
    return found ? Number(found[1]) * { us: 0.001, ms: 1, s: 1000 }[found[2] as "us"] : NaN;
  };
  const p50Ms = percentile(50);
  const p99Ms = percentile(99);
  if (!rps || Number.isNaN(p50Ms) || Number.isNaN(p99Ms)) {
    throw new Error(`cannot read wrk output:\n${text}`);
  }
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms,
    p99Ms,
    errors: Number(non2xx?.[1] ?? 0) + socketErrors,
  };
}

/** The fallback: `connections` loops of keep-alive fetches for `seconds`, latencies recorded. */
async function _runDenoClient(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const init: RequestInit = {
    method: options.method ?? "GET",
    headers: { "Accept-Encoding": "identity", ...options.headers },
  };
  if (options.body !== undefined) init.body = options.body;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const response = await fetch(options.url, init);
        await response.arrayBuffer();
        if (response.status >= 400) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    tool: "deno",
    requestsPerSecond: latencies.length / elapsed,
    p50Ms: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
    errors,
  };
}

/** What a wrk Lua script sends on every request. */
export interface WrkRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export function wrkScript(request: WrkRequest): string {
  const lines = [`wrk.method = "${request.method}"`];
  if (request.body !== undefined) lines.push(`wrk.body = ${JSON.stringify(request.body)}`);
  for (const [name, value] of Object.entries(request.headers)) {
    lines.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  return lines.join("\n") + "\n";
}

export interface ScriptedWrkOptions {
  readonly url: string;
  /** A file written from `wrkScript`. */
  readonly script: string;
  readonly seconds: number;
  readonly connections: number;
  /** The CPU wrk is pinned to (taskset), away from the servers'. */
  readonly cpu: number;
  /** Servers whose CPU time per request is measured over the run. */
  readonly servers: readonly ServerProcess[];
}

/**
 * One wrk run of a script, with each server's CPU time per request in µs (from /proc), the
 * figure that barely moves when other work shares the machine.
 */
export async function runScriptedWrk(
  options: ScriptedWrkOptions,
): Promise<LoadResult & { readonly requests: number; readonly cpuMicros: readonly number[] }> {
  const cpuBefore = await Promise.all(options.servers.map((server) => server.cpuSeconds()));
  const output = await new Deno.Command("taskset", {
    args: [
      "-c",
      String(options.cpu),
      "wrk",
      "-t1",
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      "--latency",
      "-s",
      options.script,
      options.url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const cpuAfter = await Promise.all(options.servers.map((server) => server.cpuSeconds()));
  if (!output.success) throw new Error(`wrk failed: ${new TextDecoder().decode(output.stderr)}`);
  const text = new TextDecoder().decode(output.stdout);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  return {
    tool: "wrk",
    ...parseWrkOutput(text),
    requests,
    cpuMicros: cpuAfter.map((after, i) => ((after - cpuBefore[i]!) / requests) * 1e6),
  };
}

export interface FormsMeasured {
  readonly perSecond: number;
  readonly p99Ms: number;
  readonly errors: number;
}

/**
 * `connections` keep-alive loops posting forms until the deadline; `body` makes each
 * lane's next form from its previous answer (null: the lane stops).
 */
export async function driveForms(
  seconds: number,
  connections: number,
  body: (previous: Record<string, unknown> | null, lane: number) => URLSearchParams | null,
  url: string,
  laneOf: () => number = (() => {
    let n = 0;
    return () => n++;
  })(),
): Promise<FormsMeasured> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    const lane = laneOf();
    let previous: Record<string, unknown> | null = null;
    while (performance.now() < deadline) {
      const form = body(previous, lane);
      if (form === null) return;
      const t0 = performance.now();
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form,
      });
      previous = await response.json();
      latencies.push(performance.now() - t0);
      if (response.status !== 200) {
        errors++;
        previous = null;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: (latencies.length - errors) / elapsed,
    p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? NaN,
    errors,
  };
}
