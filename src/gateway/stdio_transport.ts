// The upstream client's stdio transport: a child process speaking newline-delimited JSON-RPC
// (MCP "stdio"), many requests at once matched by id. The child gets only the environment the
// operator wrote; its stderr becomes log lines, within a budget per upstream; when it exits, what
// was pending fails and the next use starts it again after a back-off that doubles (1 s … 30 s)
// until a child answers.
import { logEvent, type LogSink } from "../http/request_log.ts";
import { JSONRPC_VERSION } from "../mcp/messages.ts";
import { UpstreamError } from "./mcp_client.ts";
import type { UpstreamConfig, UpstreamTransport } from "../config/upstreams.ts";
import {
  cancelledParams,
  readIncoming,
  refusal,
  type RpcCall,
  type RpcChannel,
  type RpcOutcome,
  tooLarge,
  untilAborted,
} from "./rpc_channel.ts";
import { runtime } from "../runtime/current.ts";
import type { ChildProcess } from "../runtime/runtime.ts";

export interface StdioChannelDeps {
  readonly log: LogSink;
  readonly now: () => number;
  /** Waits out a restart back-off; rejects with the signal's reason when it aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Notifications the child sends about no request of ours (a changed tool list). */
  readonly onNotification: (method: string) => void;
}

type StdioTransport = Extract<UpstreamTransport, { kind: "stdio" }>;

const RESTART_BACKOFF_MS = { first: 1_000, max: 30_000 } as const;
/** How long a closing child may take to leave after its stdin closed, and after SIGTERM. */
const EXIT_GRACE_MS = 500;
/** Longest stderr line logged, in characters. */
const STDERR_LINE_CHARS = 500;
/**
 * Stderr lines logged per upstream in each window; the rest are only counted, and the count is
 * logged when the next window starts or the child exits. A child that floods its stderr (or
 * prints what it was given) fills at most this much of the log.
 */
const STDERR_BUDGET = { lines: 100, windowMs: 60_000 } as const;
/** Bytes kept of each end of an overlong stdout line, to find its id. */
const ID_WINDOW = 256;

interface Pending {
  readonly call: RpcCall;
  readonly resolve: (outcome: RpcOutcome) => void;
  readonly reject: (error: unknown) => void;
}

interface Child {
  readonly process: ChildProcess;
  readonly stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly pending: Map<number, Pending>;
  /** Settles when the process has exited and both its outputs are read to the end. */
  readonly done: Promise<void>;
  exited: boolean;
  /** Whether it has answered a request: what it wrote before is its banner (info, not warn). */
  answered: boolean;
}

export function createStdioChannel(
  upstream: UpstreamConfig,
  transport: StdioTransport,
  deps: StdioChannelDeps,
): RpcChannel {
  const { title, name } = upstream;
  const encoder = new TextEncoder();
  let child: Child | null = null;
  let starting: Promise<void> | null = null;
  let epoch = 0;
  /** Exits since a child last answered, and when the last one happened. */
  let failures = 0;
  let lastExit = 0;
  /** The stderr budget's window: when it started, lines logged and dropped in it. */
  const stderr = { since: -Infinity, logged: 0, dropped: 0 };

  const spawn = (): Child => {
    let process: ChildProcess;
    try {
      process = runtime.spawn(transport.command, {
        args: transport.args,
        env: transport.env,
        ...(transport.cwd === null ? {} : { cwd: transport.cwd }),
      });
    } catch (error) {
      failures++;
      lastExit = deps.now();
      const why = runtime.isNotFound(error)
        ? "its command was not found"
        : runtime.isNotPermitted(error)
        ? "its command may not be run"
        : "its command could not be started";
      throw new UpstreamError("unreachable", `${title} is unreachable: ${why}`);
    }
    const pending = new Map<number, Pending>();
    const stdin = process.stdin.getWriter();
    const reading = Promise.all([
      _lines(process.stdout, upstream.maxResponseBytes, {
        line: (text) => onLine(current, text),
        overlong: (head, tail) => onOverlong(current, head, tail),
      }),
      _lines(process.stderr, STDERR_LINE_CHARS * 4, {
        line: (text) => logStderr(current, text),
        overlong: (head) => logStderr(current, `${head}…`),
      }),
    ]);
    const done = Promise.all([process.status, reading]).then(async ([status]) => {
      current.exited = true;
      failures++;
      lastExit = deps.now();
      reportDropped();
      const how = status.signal === null ? `code ${status.code}` : `signal ${status.signal}`;
      logEvent(deps.log, {
        level: "warn",
        message: "upstream process exited",
        upstream: name,
        how,
      });
      const error = new UpstreamError(
        "unreachable",
        `${title} is unreachable: its process exited (${how})`,
      );
      for (const entry of pending.values()) entry.reject(error);
      pending.clear();
      await stdin.close().catch(() => {});
    });
    const current: Child = { process, stdin, pending, done, exited: false, answered: false };
    return current;
  };

  const logStderr = (from: Child, text: string) => {
    const now = deps.now();
    if (now - stderr.since >= STDERR_BUDGET.windowMs) {
      reportDropped();
      Object.assign(stderr, { since: now, logged: 0 });
    }
    if (stderr.logged >= STDERR_BUDGET.lines) {
      stderr.dropped++;
      return;
    }
    stderr.logged++;
    const line = text.length > STDERR_LINE_CHARS ? `${text.slice(0, STDERR_LINE_CHARS)}…` : text;
    const level = from.answered ? "warn" : "info";
    logEvent(deps.log, { level, message: "upstream stderr", upstream: name, line });
  };

  const reportDropped = () => {
    if (stderr.dropped === 0) return;
    logEvent(deps.log, {
      level: "warn",
      message: "upstream stderr lines dropped",
      upstream: name,
      dropped: stderr.dropped,
      budget: `${STDERR_BUDGET.lines} lines a minute`,
    });
    stderr.dropped = 0;
  };

  const write = async (target: Child, message: string) => {
    try {
      await target.stdin.write(encoder.encode(`${message}\n`));
    } catch {
      throw new UpstreamError("unreachable", `${title} is unreachable: its input is closed`);
    }
  };

  const onLine = (from: Child, text: string) => {
    if (text.trim() === "") return;
    const message = readIncoming(text);
    switch (message.kind) {
      case "response": {
        failures = 0;
        from.answered = true;
        const entry = typeof message.id === "number" ? from.pending.get(message.id) : undefined;
        // Anything else answers a request already abandoned (cancelled, timed out).
        if (entry === undefined) return;
        from.pending.delete(entry.call.id);
        entry.resolve(message.outcome);
        return;
      }
      case "notification": {
        const token = message.params["progressToken"];
        const entry = token === undefined ? undefined : _byProgressToken(from.pending, token);
        if (entry !== undefined) entry.call.onNotification(message.method, message.params);
        else if (token === undefined) deps.onNotification(message.method);
        return;
      }
      case "request":
        write(from, refusal(message.id, message.method)).catch(() => {});
        return;
      case "invalid":
        logEvent(deps.log, {
          level: "warn",
          message: "upstream wrote a line that is not a message",
          upstream: name,
          problem: message.problem,
        });
    }
  };

  /** A line past the cap is dropped; the request it answered, when it can be told, fails. */
  const onOverlong = (from: Child, head: string, tail: string) => {
    const id = _sniffId(head, tail);
    const entry = id !== undefined
      ? from.pending.get(id)
      : from.pending.size === 1
      ? from.pending.values().next().value
      : undefined;
    logEvent(deps.log, {
      level: "warn",
      message: "upstream line over the cap dropped",
      upstream: name,
      maxResponseBytes: upstream.maxResponseBytes,
    });
    if (entry === undefined) return;
    from.pending.delete(entry.call.id);
    entry.reject(tooLarge(upstream));
  };

  const start = async (signal: AbortSignal) => {
    if (failures > 0) {
      const backoff = Math.min(
        RESTART_BACKOFF_MS.first * 2 ** (failures - 1),
        RESTART_BACKOFF_MS.max,
      );
      const wait = lastExit + backoff - deps.now();
      if (wait > 0) await deps.sleep(wait, signal);
    }
    child = spawn();
    epoch++;
  };

  const live = (): Child => {
    if (child === null || child.exited) {
      throw new UpstreamError("unreachable", `${title} is unreachable: its process is not running`);
    }
    return child;
  };

  return {
    get epoch() {
      return epoch;
    },

    get ready() {
      return child !== null && !child.exited;
    },

    async open(signal) {
      if (child !== null && !child.exited) return;
      starting ??= start(signal).finally(() => starting = null);
      await untilAborted(starting, signal);
    },

    request(call) {
      const target = live();
      return new Promise<RpcOutcome>((resolve, reject) => {
        if (call.signal.aborted) return reject(call.signal.reason);
        const abort = () => {
          target.pending.delete(call.id);
          reject(call.signal.reason);
        };
        call.signal.addEventListener("abort", abort, { once: true });
        const settle = <T>(then: (value: T) => void) => (value: T) => {
          call.signal.removeEventListener("abort", abort);
          then(value);
        };
        target.pending.set(call.id, { call, resolve: settle(resolve), reject: settle(reject) });
        const line = JSON.stringify({
          jsonrpc: JSONRPC_VERSION,
          id: call.id,
          method: call.method,
          params: call.params,
        });
        write(target, line).catch((error) => {
          target.pending.delete(call.id);
          settle(reject)(error);
        });
      });
    },

    async notify(method, params) {
      await write(live(), JSON.stringify({ jsonrpc: JSONRPC_VERSION, method, params }));
    },

    async cancel(call, reason) {
      // MCP "Cancellation": stdio has no stream to close, so the child is told.
      if (child === null || child.exited) return;
      const params = cancelledParams(call.id, reason);
      await write(
        child,
        JSON.stringify({ jsonrpc: JSONRPC_VERSION, method: "notifications/cancelled", params }),
      )
        .catch(() => {});
    },

    async close() {
      const target = child;
      child = null;
      if (target === null) return;
      // MCP "stdio" shutdown: close its input and wait; then SIGTERM, wait; then SIGKILL.
      // Node's SDK servers do not leave when their input closes, so the waits are short.
      await target.stdin.close().catch(() => {});
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        if (await _exitsWithin(target.done, EXIT_GRACE_MS)) break;
        try {
          target.process.kill(signal);
        } catch {
          // Already gone.
        }
      }
      await target.done;
      failures = 0;
    },
  };
}

async function _exitsWithin(done: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  const exited = await Promise.race([done.then(() => true), late]);
  clearTimeout(timer);
  return exited;
}

/** The pending call whose request asked for progress under this token. */
function _byProgressToken(pending: Map<number, Pending>, token: unknown): Pending | undefined {
  for (const entry of pending.values()) {
    const meta = entry.call.params["_meta"] as Record<string, unknown> | undefined;
    if (meta?.["progressToken"] === token) return entry;
  }
  return undefined;
}

/**
 * The id of a response dropped for its size, from the ends kept of it: JSON-RPC libraries
 * write `id` either right after `jsonrpc` or as the last key.
 */
function _sniffId(head: string, tail: string): number | undefined {
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d+)/.exec(head) ??
    /"id"\s*:\s*(\d+)\s*\}\s*$/.exec(tail);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Each newline-ended line of a stream as text, as it arrives. A line longer than `maxBytes` is
 * not kept: only its first and last bytes are, and `overlong` gets them when it ends.
 */
async function _lines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  on: { line: (text: string) => void; overlong: (head: string, tail: string) => void },
): Promise<void> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let head: Uint8Array | null = null;
  let tail: Uint8Array = new Uint8Array(0);
  const add = (bytes: Uint8Array) => {
    if (head !== null) {
      tail = _lastBytes(tail, bytes, ID_WINDOW);
      return;
    }
    size += bytes.byteLength;
    if (size <= maxBytes) {
      parts.push(bytes);
      return;
    }
    const kept = _join([...parts, bytes]);
    head = kept.subarray(0, ID_WINDOW);
    tail = kept.slice(Math.max(ID_WINDOW, kept.byteLength - ID_WINDOW));
    parts = [];
  };
  const end = () => {
    if (head !== null) on.overlong(decoder.decode(head), decoder.decode(tail));
    else if (size > 0) on.line(decoder.decode(_join(parts)).replace(/\r$/, ""));
    parts = [];
    size = 0;
    head = null;
    tail = new Uint8Array(0);
  };
  try {
    for await (const chunk of stream) {
      let from = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, from)) {
        add(chunk.subarray(from, at));
        end();
        from = at + 1;
      }
      if (from < chunk.byteLength) add(chunk.slice(from));
    }
  } catch {
    // The pipe broke with the process; its exit says what happened.
  }
}

function _join(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.byteLength;
  }
  return joined;
}

function _lastBytes(kept: Uint8Array, more: Uint8Array, count: number): Uint8Array {
  const joined = _join([kept, more]);
  return joined.slice(Math.max(0, joined.byteLength - count));
}
