// main.ts as a child process, the way `deno task start` runs it, or in the suite's Node.js pass
// the way `npm start` runs it (a deno.json task's flags become Node.js's: _nodeFlags).
import assert from "node:assert/strict";
import { SHIPPED_PLACEHOLDERS } from "../../../src/content/placeholders.ts";
import { permissionFlags, serverFlags } from "../../../deploy/node_flags.mjs";
import { nodeMajor } from "../../../testkit/node_binary.ts";
import { serverNode } from "./server_runtime.ts";

export const ROOT = new URL("../../../", import.meta.url);

/** The Deno flags of the `start` task, read from deno.json so tests cannot drift from it. */
export function startTaskFlags(): Promise<string[]> {
  return taskFlags("start", "main.ts");
}

/** The Deno flags of a `deno run … ENTRY` task in deno.json. */
export async function taskFlags(task: string, entry: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const words: string[] = config.tasks[task].split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"]);
  assert.equal(words.at(-1), entry);
  const flags = words.slice(2, -1);
  assert.ok(!flags.some((f) => f === "-A" || f.startsWith("--allow-all")), "never -A");
  return flags;
}

export { originsEnv } from "./harness.ts";

export interface MainOptions {
  /** The module to run; main.ts by default. */
  readonly entry?: string;
  readonly args?: readonly string[] | undefined;
  /** The project directory; this checkout by default. */
  readonly cwd?: string | URL;
  /** Run under this umask (through /bin/sh), e.g. "022". */
  readonly umask?: string;
  /** Standard input: none by default. */
  readonly stdin?: "null" | "piped";
}

/**
 * `deno run FLAGS main.ts ARGS` in the project directory, with only `env` and NO_COLOR set; in the
 * Node.js pass `node` with the same permissions in Node.js's words.
 */
export function mainCommand(
  flags: readonly string[],
  env: Record<string, string>,
  options: MainOptions = {},
): Deno.Command {
  const entry = options.entry ?? "main.ts";
  const cwd = options.cwd ?? ROOT;
  const node = serverNode();
  const lock = env.VESTIBULE_OTEL === "on" ? [_scratchLock(cwd)] : [];
  const run = node === null
    ? [Deno.execPath(), "run", ...lock, ...flags, entry, ...options.args ?? []]
    : [node, ..._nodeFlags(flags, nodeMajor(node)), entry, ...options.args ?? []];
  const [command, ...args] = options.umask === undefined
    ? run
    : ["/bin/sh", "-c", `umask ${options.umask} && exec "$@"`, "sh", ...run];
  return new Deno.Command(command!, {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * The flags of a deno.json task as Node.js's on Node.js `major`: those `npm start` and `npm run
 * admin` run the server and the commands with (deploy/node_flags.mjs) for the `start` and `admin`
 * tasks' own flags (and what follows them, translated), else each Deno permission as its Node.js
 * counterpart (the module files are read under --permission too; Deno's environment allowance has
 * none, and its network allowance has one from Node.js 25 on).
 */
function _nodeFlags(flags: readonly string[], major: number): string[] {
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("deno.json", ROOT))).tasks;
  const npm: Record<string, string[]> = {
    start: serverFlags(major),
    admin: permissionFlags(major),
  };
  for (const name of ["start", "admin"]) {
    const own: string[] = tasks[name].split(/\s+/).slice(2, -1);
    if (own.every((flag, i) => flags[i] === flag)) {
      return [...npm[name]!, ..._nodePermissions(flags.slice(own.length), major)];
    }
  }
  if (flags.some((f) => f === "-A" || f.startsWith("--allow-all"))) return [];
  return [
    "--permission",
    ...NODE_MODULE_READS.map((path) => `--allow-fs-read=${path}`),
    ..._nodePermissions(flags, major),
  ];
}

function _nodePermissions(flags: readonly string[], major: number): string[] {
  const out: string[] = [];
  for (const flag of flags) {
    const [name, value] = flag.split(/=(.*)/s) as [string, string | undefined];
    if (name === "--allow-read" || name === "--allow-write") {
      const kind = name === "--allow-read" ? "read" : "write";
      for (const path of value?.split(",") ?? ["*"]) out.push(`--allow-fs-${kind}=${path}`);
    } else if (name === "--allow-run") {
      out.push("--allow-child-process", "--disable-warning=PERM0002");
    } else if (name === "--allow-net") {
      if (major >= 25) out.push("--allow-net", "--disable-warning=ExperimentalWarning");
    } else if (name === "--v8-flags") {
      out.push(...value!.split(",").map((v) => v.replace(/^-*/, "--")));
    } else if (!/^--(allow-env|allow-sys|unstable-)/.test(name)) {
      throw new Error(`no Node.js counterpart for the Deno flag ${flag}`);
    }
  }
  return out;
}

/** What Node.js reads to load the server, which Deno reads without a permission. */
const NODE_MODULE_READS = ["./main.ts", "./package.json", "./src/*", "./node_modules/*"];

/**
 * `--lock=` a copy of the project's deno.lock: Deno records the OpenTelemetry packages in the lock
 * the first time tracing loads them (docs/operating.md), and the checkout's deno.lock must keep
 * naming the runtime packages only (tests/runtime_dependencies_test.ts).
 */
function _scratchLock(project: string | URL): string {
  const path = Deno.makeTempFileSync({ prefix: "vestibule-deno-", suffix: ".lock" });
  Deno.copyFileSync(
    new URL("deno.lock", new URL(`${project}`.replace(/\/?$/, "/"), "file:")),
    path,
  );
  return `--lock=${path}`;
}

/**
 * A copy of what `deno task start` needs (no data/), in a new temporary directory; with
 * package.json and node_modules for `npm start` in the Node.js pass.
 */
export async function copyProject(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "vestibule-project-" });
  const node = serverNode() !== null;
  for (const name of ["main.ts", "deno.json", "deno.lock", ...node ? ["package.json"] : []]) {
    await Deno.copyFile(new URL(name, ROOT), `${dir}/${name}`);
  }
  for (const tree of ["src", "static", ...node ? ["node_modules"] : []]) {
    await _copyTree(new URL(`${tree}/`, ROOT), `${dir}/${tree}`);
  }
  return dir;
}

/**
 * Edits every shipped placeholder page in the static directory `dir` (one more line), as an
 * operator who wrote their own would: start-up and `check` then have none to report.
 */
export async function editPlaceholders(dir: string | URL): Promise<void> {
  const base = typeof dir === "string" ? new URL(`file://${dir}/`) : dir;
  for (const name of Object.keys(SHIPPED_PLACEHOLDERS)) {
    await Deno.writeTextFile(new URL(name, base), "\n", { append: true });
  }
}

/** A copy of static/ with every placeholder edited; the caller removes it. */
export async function editedStaticDir(): Promise<URL> {
  const dir = new URL(`file://${await Deno.makeTempDir({ prefix: "vestibule-static-" })}/`);
  await _copyTree(new URL("static/", ROOT), dir.pathname);
  await editPlaceholders(dir);
  return dir;
}

async function _copyTree(from: URL, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await _copyTree(new URL(`${entry.name}/`, from), `${to}/${entry.name}`);
    else if (entry.isFile) await Deno.copyFile(new URL(entry.name, from), `${to}/${entry.name}`);
  }
}

export interface StartupOutcome {
  readonly code: number;
  /** The server got as far as listening (and was then stopped). */
  readonly listened: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs main.ts until it exits, or until it listens (then stops it), so a failure cannot hang. */
export async function startup(command: Deno.Command): Promise<StartupOutcome> {
  const child = command.spawn();
  const stderr = new Response(child.stderr).text();
  let stdout = "";
  let listened = false;
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    stdout += chunk;
    if (!listened && stdout.includes('"message":"listening"')) {
      listened = true;
      child.kill("SIGTERM");
    }
  }
  return { code: (await child.status).code, listened, stdout, stderr: await stderr };
}

export interface ServerProcess {
  /** Its process id (for signals). */
  readonly pid: number;
  /** Resolves with the first stdout line matching `pattern`; fails after 60 s rather than hang. */
  waitForLine(pattern: RegExp): Promise<string>;
  /** SIGTERM; resolves once it exited, with its exit code and everything it wrote. */
  stop(): Promise<{ code: number; stdout: string; stderr: string }>;
  /** kill -9, as a crash would; resolves once it is gone. */
  crash(): Promise<void>;
}

/**
 * Starts main.ts in `dir` as `deno task start` runs it (or as `command` says), with `env`;
 * resolves once it listens.
 */
export async function startServerProcess(
  dir: string,
  env: Record<string, string>,
  command?: Deno.Command,
): Promise<ServerProcess> {
  const child = (command ?? mainCommand(await startTaskFlags(), env, { cwd: dir })).spawn();
  const stderr = new Response(child.stderr).text();
  let stdout = "";
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const line = stdout.split("\n").find((l) => waiter.pattern.test(l));
      if (line === undefined) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  };
  const reading = (async () => {
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      stdout += chunk;
      check();
    }
  })();
  const server: ServerProcess = {
    pid: child.pid,
    waitForLine(pattern) {
      const found = new Promise<string>((resolve) => waiters.push({ pattern, resolve }));
      check();
      const exited = child.status.then(async ({ code }) => {
        await reading;
        check();
        return assert.fail(`server exited ${code} before ${pattern}:\n${stdout}${await stderr}`);
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no ${pattern} within 60 s:\n${stdout}`)),
          60_000,
        );
      });
      return Promise.race([found, exited, late]).finally(() => clearTimeout(timer));
    },
    async stop() {
      child.kill("SIGTERM");
      const { code } = await child.status;
      await reading;
      return { code, stdout, stderr: await stderr };
    },
    async crash() {
      child.kill("SIGKILL");
      await child.status;
      await reading;
    },
  };
  await server.waitForLine(/"message":"listening"/);
  return server;
}

/** Starts main.ts in `dir` with `env`, runs `during` once it listens, then stops it (exit 0). */
export async function whileServing<T>(
  dir: string,
  env: Record<string, string>,
  during: () => Promise<T>,
): Promise<T> {
  const server = await startServerProcess(dir, env);
  try {
    return await during();
  } finally {
    const { code, stderr } = await server.stop();
    assert.equal(code, 0, stderr);
  }
}

/**
 * `deno task admin` in `dir` as its own process with the admin task's permissions: runs one
 * command with `env` alone, `input` on standard input, and returns its exit code and output.
 */
export async function adminProcess(dir: string) {
  const flags = await taskFlags("admin", "src/operator/cli/cli.ts");
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return async (env: Record<string, string>, args: string[], input = "") => {
    const command = mainCommand(flags, env, {
      cwd: dir,
      entry: "src/operator/cli/cli.ts",
      args,
      stdin: "piped",
    });
    const child = command.spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
    const output = await child.output();
    return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
  };
}
