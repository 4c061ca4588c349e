// Real upstream MCP servers for the gateway's tests: the official `server-everything` over
// Streamable HTTP (a process on a free loopback port) or as a stdio child, `server-memory` as a
// stdio child, and an UpstreamConfig around any transport. Pinned versions; their packages are
// in tests/test.lock.
import type { UpstreamConfig, UpstreamTransport } from "../src/config/upstreams.ts";
import { freePort } from "./ports.ts";

export const EVERYTHING = "npm:@modelcontextprotocol/server-everything@2026.8.31";
export const MEMORY = "npm:@modelcontextprotocol/server-memory@2026.8.31";

const LOCK = new URL("../tests/test.lock", import.meta.url).pathname;

/** An upstream's configuration with test defaults; `overrides` win. */
export function upstreamConfig(
  transport: UpstreamTransport,
  overrides: Partial<UpstreamConfig> = {},
): UpstreamConfig {
  return {
    name: "everything",
    title: "Everything",
    transport,
    gated: new Set(),
    hidden: new Set(),
    toolScopes: new Map(),
    ownerOnly: false,
    businesses: null,
    timeoutMs: 10_000,
    maxResponseBytes: 1_048_576,
    forwardIdentity: false,
    rateLimit: { perMinute: 600, burst: 100 },
    auth: null,
    ...overrides,
  };
}

let denoDir: Promise<string> | null = null;

/**
 * The environment a `deno run npm:…` child needs and nothing more: where Deno's cache is (the
 * packages are resolved from it, offline from JSR's point of view), and no colours.
 */
export async function denoChildEnv(): Promise<Record<string, string>> {
  denoDir ??= new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output()
    .then((out) =>
      (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir
    );
  return { DENO_DIR: await denoDir, NO_COLOR: "1" };
}

/** A stdio transport running an npm MCP server package through this Deno. */
export async function npmStdioTransport(
  specifier: string,
  args: readonly string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<UpstreamTransport> {
  return {
    kind: "stdio",
    command: Deno.execPath(),
    args: ["run", "-A", "--no-config", `--lock=${LOCK}`, specifier, ...args],
    env: { ...await denoChildEnv(), ...extraEnv },
    cwd: null,
  };
}

export function everythingStdioTransport(): Promise<UpstreamTransport> {
  return npmStdioTransport(EVERYTHING, ["stdio"]);
}

export interface RunningHttpUpstream {
  readonly url: string;
  readonly port: number;
  /** SIGKILL, as a crash: nothing is closed politely. */
  kill(): Promise<void>;
}

/** server-everything's Streamable HTTP server on `port`, once it says it is listening. */
export async function startEverythingHttp(port = freePort()): Promise<RunningHttpUpstream> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", `--lock=${LOCK}`, EVERYTHING, "streamableHttp"],
    env: { ...await denoChildEnv(), PORT: String(port) },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const drained = child.stdout.pipeTo(new WritableStream());
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 20_000;
  while (!/listening on port/i.test(seen)) {
    const { done, value } = await stderr.read();
    if (done || Date.now() > deadline) {
      child.kill("SIGKILL");
      await child.status;
      throw new Error(`server-everything did not start on port ${port}: ${seen.slice(-500)}`);
    }
    seen += value;
  }
  const rest = (async () => {
    while (!(await stderr.read()).done);
  })();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    async kill() {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await Promise.all([child.status, drained.catch(() => {}), rest.catch(() => {})]);
    },
  };
}
