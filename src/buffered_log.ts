/**
 * The log lines, written in batches. Writing each line as it comes (console.log) cost a system
 * call and most of the request log's time on every request; a write at the end of every
 * event-loop turn still cost a timer and a system call per few requests under load (bench
 * as-run). Here a line waits at most 50 ms, or until 64 KiB are waiting (a few hundred request
 * lines), and they go out in one write: nginx's `access_log … buffer= flush=` in small. The
 * write is synchronous, so a slow reader holds the server back as console.log did rather than
 * letting memory grow.
 *
 * Nothing waiting is lost when the process ends: `flushBeforeExit` writes it on a normal exit
 * or Deno.exit (the `unload` event), and before an uncaught error or unhandled rejection ends
 * the process. Only a kill that no process can catch (SIGKILL) loses lines: the last 50 ms at most.
 */
import type { LogSink } from "./http/request_log.ts";
import { runtime } from "./runtime/current.ts";

/** A few hundred request lines: one write per burst, small enough to stay in the CPU cache. */
const MAX_WAITING_BYTES = 64 * 1024;
/** How long a line may wait: `tail -f` still looks live, and a quiet server writes rarely. */
const MAX_WAITING_MS = 50;

export interface BufferedLog {
  readonly log: LogSink;
  /** Writes every waiting line now. */
  flush(): void;
}

/** What the lines go to: standard output, or a file. */
export interface LogOutput {
  writeSync(bytes: Uint8Array): number;
}

export function createBufferedLog(output: LogOutput): BufferedLog {
  const encoder = new TextEncoder();
  // Lines are encoded straight into one buffer (no joined string, no copy per batch), with
  // room for a whole batch plus the line that fills it: UTF-8 takes at most 3 bytes per
  // UTF-16 unit.
  const buffer = new Uint8Array(2 * MAX_WAITING_BYTES);
  let waiting = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const write = (bytes: Uint8Array) => {
    try {
      // A write may take part of the bytes (a pipe, a signal); the rest follows.
      for (let written = 0; written < bytes.length;) {
        written += output.writeSync(bytes.subarray(written));
      }
    } catch (error) {
      // The reader is gone, so nobody can get the lines: dropped, as console.log does. Any
      // other failure (a full disk) ends the process rather than serving without a log.
      if (!runtime.isBrokenPipe(error)) throw error;
    }
  };
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting === 0) return;
    const bytes = buffer.subarray(0, waiting);
    waiting = 0;
    write(bytes);
  };
  return {
    log(line) {
      const most = 3 * line.length + 1;
      if (waiting + most > buffer.length) flush();
      if (most > buffer.length) return write(encoder.encode(line + "\n"));
      waiting += encoder.encodeInto(line, buffer.subarray(waiting)).written;
      buffer[waiting++] = 0x0a;
      if (waiting >= MAX_WAITING_BYTES) flush();
      else timer ??= setTimeout(flush, MAX_WAITING_MS);
    },
    flush,
  };
}

/** Writes what waits before the process ends, however it ends short of SIGKILL. */
export function flushBeforeExit(log: BufferedLog): void {
  runtime.beforeExit(() => log.flush());
}
