/** Servers under test run as child processes, so they never share a thread with the load. */

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
const _CLOCK_TICKS = 100;

export interface ServerProcess {
  readonly pid: number;
  /** Milliseconds from spawning the process to its first 200 on `readyUrl`. */
  readonly startMs: number;
  /** Resident memory now (VmRSS from /proc), in KiB; NaN where /proc is absent. */
  rssKib(): Promise<number>;
  /** Peak resident memory so far (VmHWM from /proc), in KiB; NaN where /proc is absent. */
  peakRssKib(): Promise<number>;
  /**
   * Resident memory now, split (RssAnon and RssFile from /proc), in KiB: what the process
   * allocated, and the pages of files it maps, most of them the `deno` executable's own code,
   * which the kernel may drop and read again.
   */
  residentKib(): Promise<{ readonly anonymous: number; readonly files: number }>;
  /**
   * CPU time the process has used so far (user + system, from /proc), in seconds; NaN where
   * /proc is absent. Per request, it barely moves when other work shares the machine.
   */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The command and its arguments, e.g. [Deno.execPath(), "run", "-A", "bench/x.ts"]. */
  readonly command: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Polled with GET until it answers 200. */
  readonly readyUrl: string;
  readonly cwd?: string | URL;
  /** A file that takes the process's stdout (the request log), as a service manager does. */
  readonly stdoutFile?: string;
  /** The CPU the process is pinned to (taskset), so the load generator never shares it. */
  readonly cpu?: number;
}

export async function startServerProcess(options: StartOptions): Promise<ServerProcess> {
  let argv = [...options.command];
  // `exec` keeps one process: the pid read from /proc is the server's own.
  if (options.stdoutFile !== undefined) {
    argv = ["/bin/sh", "-c", 'exec "$@" > "$STDOUT_FILE"', "sh", ...argv];
  }
  if (options.cpu !== undefined) argv = ["taskset", "-c", String(options.cpu), ...argv];
  const [command, ...args] = argv;
  const spawned = performance.now();
  const child = new Deno.Command(command!, {
    args,
    env: {
      NO_COLOR: "1",
      ...options.env,
      ...(options.stdoutFile === undefined ? {} : { STDOUT_FILE: options.stdoutFile }),
    },
    cwd: options.cwd ?? new URL("../", import.meta.url),
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const deadline = Date.now() + 30_000;
  // A property, not a variable: the compiler cannot see the callback set it.
  const ended: { status: Deno.CommandStatus | null } = { status: null };
  child.status.then((status) => ended.status = status);
  for (;;) {
    try {
      const response = await fetch(options.readyUrl);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    // A server that could not start says why on stderr (inherited): no wait, and nothing to kill.
    if (ended.status !== null) {
      throw new Error(
        `${
          options.command.join(" ")
        } exited (${ended.status.code}) before it answered ${options.readyUrl}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${options.command.join(" ")} did not answer ${options.readyUrl}`);
    }
    // Often enough to time the start to a few milliseconds.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const startMs = performance.now() - spawned;
  /** The given `/proc/PID/status` fields, in KiB, from one read of the file. */
  const status = async (...fields: string[]) => {
    let text = "";
    try {
      text = await Deno.readTextFile(`/proc/${child.pid}/status`);
    } catch {
      // no /proc: every field is NaN
    }
    return fields.map((field) =>
      Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? NaN)
    );
  };
  return {
    pid: child.pid,
    startMs,
    rssKib: async () => (await status("VmRSS"))[0]!,
    peakRssKib: async () => (await status("VmHWM"))[0]!,
    async residentKib() {
      const [anonymous, files] = await status("RssAnon", "RssFile");
      return { anonymous: anonymous!, files: files! };
    },
    async cpuSeconds() {
      try {
        const stat = await Deno.readTextFile(`/proc/${child.pid}/stat`);
        // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return (Number(fields[11]) + Number(fields[12])) / _CLOCK_TICKS;
      } catch {
        return NaN;
      }
    },
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}
