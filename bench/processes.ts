/** Servers under test run as child processes, so they never share a thread with the load. */

/** Linux reports CPU time in clock ticks of 1/100 s (USER_HZ). */
const _CLOCK_TICKS = 100;

export interface ServerProcess {
  readonly pid: number;
  /** Peak resident memory so far (VmHWM from /proc), in KiB; NaN where /proc is absent. */
  peakRssKib(): Promise<number>;
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
}

export async function startServerProcess(options: StartOptions): Promise<ServerProcess> {
  const [command, ...args] = options.command;
  const child = new Deno.Command(command!, {
    args,
    env: { NO_COLOR: "1", ...options.env },
    cwd: options.cwd ?? new URL("../", import.meta.url),
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const response = await fetch(options.readyUrl);
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${options.command.join(" ")} did not answer ${options.readyUrl}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    pid: child.pid,
    async peakRssKib() {
      try {
        const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
        return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
      } catch {
        return NaN;
      }
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

/** Ports the OS says are free right now. */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of listeners) l.close();
  return ports;
}
