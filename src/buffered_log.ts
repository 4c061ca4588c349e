/**
 * The log lines, written in batches. Writing each line as it comes (console.log) cost a system
 * call and most of the request log's time on every request (bench as-run); here lines wait for
 * the end of the event-loop turn (or until 64 KiB are waiting) and go out in one write. The
 * write is synchronous, so a slow reader holds the server back as console.log did rather than
 * letting memory grow.
 *
 * Nothing waiting is lost when the process ends: `flushBeforeExit` writes it on a normal exit
 * or Deno.exit (the `unload` event), and before an uncaught error or unhandled rejection ends
 * the process. Only a kill that no process can catch (SIGKILL) loses the last turn's lines.
 */
import type { LogSink } from "./http/request_log.ts";

/** Enough for a burst of requests in one turn, small enough to stay in the CPU cache. */
const MAX_WAITING_BYTES = 64 * 1024;

export interface BufferedLog {
  readonly log: LogSink;
  /** Writes every waiting line now. */
  flush(): void;
}

/** What the lines go to: Deno.stdout, or a file. */
export interface LogOutput {
  writeSync(bytes: Uint8Array): number;
}

export function createBufferedLog(output: LogOutput): BufferedLog {
  const encoder = new TextEncoder();
  let waiting: string[] = [];
  let waitingBytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const bytes = encoder.encode(waiting.join("\n") + "\n");
    waiting = [];
    waitingBytes = 0;
    try {
      // A write may take part of the bytes (a pipe, a signal); the rest follows.
      for (let written = 0; written < bytes.length;) {
        written += output.writeSync(bytes.subarray(written));
      }
    } catch (error) {
      // The reader is gone, so nobody can get the lines: dropped, as console.log does. Any
      // other failure (a full disk) ends the process rather than serving without a log.
      if (!(error instanceof Deno.errors.BrokenPipe)) throw error;
    }
  };
  return {
    log(line) {
      waiting.push(line);
      waitingBytes += line.length + 1;
      if (waitingBytes >= MAX_WAITING_BYTES) flush();
      else timer ??= setTimeout(flush, 0);
    },
    flush,
  };
}

/** Writes what waits before the process ends, however it ends short of SIGKILL. */
export function flushBeforeExit(log: BufferedLog): void {
  // The error events come before the runtime reports the error and exits; not prevented here.
  for (const event of ["unload", "error", "unhandledrejection"]) {
    globalThis.addEventListener(event, () => log.flush());
  }
}
