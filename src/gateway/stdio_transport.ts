// The upstream client's stdio transport: a child process speaking newline-delimited JSON-RPC
// (MCP "stdio"), many requests at once matched by id (stdio_child.ts). The child gets only the
// environment the operator wrote; its stderr becomes log lines, within a budget per upstream;
// when it exits, what was pending fails and the next use starts it again after a back-off that
// doubles (1 s … 30 s) until a child answers.
import type { LogSink } from "../http/request_log.ts";
import { JSONRPC_VERSION } from "../mcp/messages.ts";
import { UpstreamError } from "./mcp_client.ts";
import type { UpstreamConfig, UpstreamTransport } from "../config/upstreams.ts";
import { cancelledParams, type RpcChannel, type RpcOutcome, untilAborted } from "./rpc_channel.ts";
import { runtime } from "../runtime/current.ts";
import type { ChildProcess } from "../runtime/runtime.ts";
import { StderrBudget, StdioChild } from "./stdio_child.ts";

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

export function createStdioChannel(
  upstream: UpstreamConfig,
  transport: StdioTransport,
  deps: StdioChannelDeps,
): RpcChannel {
  const { title } = upstream;
  let child: StdioChild | null = null;
  let starting: Promise<void> | null = null;
  let epoch = 0;
  /** Exits since a child last answered, and when the last one happened. */
  let failures = 0;
  let lastExit = 0;
  const failed = () => {
    failures++;
    lastExit = deps.now();
  };
  const hooks = {
    log: deps.log,
    stderr: new StderrBudget(deps.log, upstream.name, deps.now),
    onNotification: deps.onNotification,
    answered: () => failures = 0,
    exited: failed,
  };

  const spawn = (): StdioChild => {
    let process: ChildProcess;
    try {
      process = runtime.spawn(transport.command, {
        args: transport.args,
        env: transport.env,
        ...(transport.cwd === null ? {} : { cwd: transport.cwd }),
      });
    } catch (error) {
      failed();
      const why = runtime.isNotFound(error)
        ? "its command was not found"
        : runtime.isNotPermitted(error)
        ? "its command may not be run"
        : "its command could not be started";
      throw new UpstreamError("unreachable", `${title} is unreachable: ${why}`);
    }
    return new StdioChild(process, upstream, hooks);
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

  const live = (): StdioChild => {
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
        target.write(line).catch((error) => {
          target.pending.delete(call.id);
          settle(reject)(error);
        });
      });
    },

    async notify(method, params) {
      await live().write(JSON.stringify({ jsonrpc: JSONRPC_VERSION, method, params }));
    },

    async cancel(call, reason) {
      // MCP "Cancellation": stdio has no stream to close, so the child is told.
      if (child === null || child.exited) return;
      const params = cancelledParams(call.id, reason);
      await child.write(
        JSON.stringify({ jsonrpc: JSONRPC_VERSION, method: "notifications/cancelled", params }),
      ).catch(() => {});
    },

    async close() {
      const target = child;
      child = null;
      if (target === null) return;
      await target.close();
      failures = 0;
    },
  };
}
