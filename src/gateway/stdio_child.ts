// One child process of a stdio upstream: its requests in flight matched by id, what it writes
// read as messages (a request of its own refused, progress to its call, other notifications to
// the channel), its stderr logged within the upstream's budget, and its shutdown.
import { logEvent, type LogSink } from "../http/request_log.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import type { ChildProcess } from "../runtime/runtime.ts";
import { UpstreamError } from "./mcp_client.ts";
import { readIncoming, refusal, type RpcCall, type RpcOutcome, tooLarge } from "./rpc_channel.ts";
import { readLines, sniffId } from "./stdio_lines.ts";

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

export interface Pending {
  readonly call: RpcCall;
  readonly resolve: (outcome: RpcOutcome) => void;
  readonly reject: (error: unknown) => void;
}

/** What a child tells the channel that started it. */
export interface ChildHooks {
  readonly log: LogSink;
  /** The upstream's stderr budget, which outlives each child. */
  readonly stderr: StderrBudget;
  /** Notifications the child sends about no request of ours (a changed tool list). */
  readonly onNotification: (method: string) => void;
  /** It answered a request: it works. */
  readonly answered: () => void;
  /** It exited (after its outputs were read to the end). */
  readonly exited: () => void;
}

/** The stderr lines of an upstream's children: so many a minute logged, the rest counted. */
export class StderrBudget {
  readonly log: LogSink;
  readonly upstream: string;
  readonly now: () => number;
  #since = -Infinity;
  #logged = 0;
  #dropped = 0;

  constructor(
    log: LogSink,
    upstream: string,
    now: () => number,
  ) {
    this.log = log;
    this.upstream = upstream;
    this.now = now;
  }

  /** A line of the child's; before its first answer, its banner (info, not warn). */
  line(text: string, answered: boolean): void {
    const now = this.now();
    if (now - this.#since >= STDERR_BUDGET.windowMs) {
      this.reportDropped();
      this.#since = now;
      this.#logged = 0;
    }
    if (this.#logged >= STDERR_BUDGET.lines) {
      this.#dropped++;
      return;
    }
    this.#logged++;
    const line = text.length > STDERR_LINE_CHARS ? `${text.slice(0, STDERR_LINE_CHARS)}…` : text;
    const level = answered ? "warn" : "info";
    logEvent(this.log, { level, message: "upstream stderr", upstream: this.upstream, line });
  }

  reportDropped(): void {
    if (this.#dropped === 0) return;
    logEvent(this.log, {
      level: "warn",
      message: "upstream stderr lines dropped",
      upstream: this.upstream,
      dropped: this.#dropped,
      budget: `${STDERR_BUDGET.lines} lines a minute`,
    });
    this.#dropped = 0;
  }
}

const encoder = new TextEncoder();

export class StdioChild {
  readonly pending = new Map<number, Pending>();
  /** Settles when the process has exited and both its outputs are read to the end. */
  readonly done: Promise<void>;
  exited = false;
  /** Whether it has answered a request: what it wrote before is its banner (info, not warn). */
  answered = false;
  readonly upstream: UpstreamConfig;
  readonly hooks: ChildHooks;
  readonly #process: ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;

  constructor(process: ChildProcess, upstream: UpstreamConfig, hooks: ChildHooks) {
    this.upstream = upstream;
    this.hooks = hooks;
    this.#process = process;
    this.#stdin = process.stdin.getWriter();
    const { stderr } = hooks;
    const reading = Promise.all([
      readLines(process.stdout, upstream.maxResponseBytes, {
        line: (text) => this.#onLine(text),
        overlong: (head, tail) => this.#onOverlong(head, tail),
      }),
      readLines(process.stderr, STDERR_LINE_CHARS * 4, {
        line: (text) => stderr.line(text, this.answered),
        overlong: (head) => stderr.line(`${head}…`, this.answered),
      }),
    ]);
    this.done = Promise.all([process.status, reading]).then(async ([status]) => {
      this.exited = true;
      hooks.exited();
      stderr.reportDropped();
      const how = status.signal === null ? `code ${status.code}` : `signal ${status.signal}`;
      logEvent(hooks.log, {
        level: "warn",
        message: "upstream process exited",
        upstream: upstream.name,
        how,
      });
      const error = new UpstreamError(
        "unreachable",
        `${upstream.title} is unreachable: its process exited (${how})`,
      );
      for (const entry of this.pending.values()) entry.reject(error);
      this.pending.clear();
      await this.#stdin.close().catch(() => {});
    });
  }

  /** One message, as a line of its input. */
  async write(message: string): Promise<void> {
    try {
      await this.#stdin.write(encoder.encode(`${message}\n`));
    } catch {
      throw new UpstreamError(
        "unreachable",
        `${this.upstream.title} is unreachable: its input is closed`,
      );
    }
  }

  /**
   * MCP "stdio" shutdown: close its input and wait; then SIGTERM, wait; then SIGKILL. Node's SDK
   * servers do not leave when their input closes, so the waits are short.
   */
  async close(): Promise<void> {
    await this.#stdin.close().catch(() => {});
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (await _exitsWithin(this.done, EXIT_GRACE_MS)) break;
      try {
        this.#process.kill(signal);
      } catch {
        // Already gone.
      }
    }
    await this.done;
  }

  #onLine(text: string): void {
    if (text.trim() === "") return;
    const message = readIncoming(text);
    switch (message.kind) {
      case "response": {
        this.hooks.answered();
        this.answered = true;
        const entry = typeof message.id === "number" ? this.pending.get(message.id) : undefined;
        // Anything else answers a request already abandoned (cancelled, timed out).
        if (entry === undefined) return;
        this.pending.delete(entry.call.id);
        entry.resolve(message.outcome);
        return;
      }
      case "notification": {
        const token = message.params["progressToken"];
        const entry = token === undefined ? undefined : _byProgressToken(this.pending, token);
        if (entry !== undefined) entry.call.onNotification(message.method, message.params);
        else if (token === undefined) this.hooks.onNotification(message.method);
        return;
      }
      case "request":
        this.write(refusal(message.id, message.method)).catch(() => {});
        return;
      case "invalid":
        logEvent(this.hooks.log, {
          level: "warn",
          message: "upstream wrote a line that is not a message",
          upstream: this.upstream.name,
          problem: message.problem,
        });
    }
  }

  /** A line past the cap is dropped; the request it answered, when it can be told, fails. */
  #onOverlong(head: string, tail: string): void {
    const { pending } = this;
    const id = sniffId(head, tail);
    const entry = id !== undefined
      ? pending.get(id)
      : pending.size === 1
      ? pending.values().next().value
      : undefined;
    logEvent(this.hooks.log, {
      level: "warn",
      message: "upstream line over the cap dropped",
      upstream: this.upstream.name,
      maxResponseBytes: this.upstream.maxResponseBytes,
    });
    if (entry === undefined) return;
    pending.delete(entry.call.id);
    entry.reject(tooLarge(this.upstream));
  }
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
