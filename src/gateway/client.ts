// createMcpClient: Vestibule's MCP client for one upstream. Connects on first use (one
// handshake shared by concurrent callers), gives every call the upstream's whole-call deadline,
// tells the upstream about abandoned calls, starts a new session when the old one is gone, and
// maps tools/list and tools/call onto the transport (Streamable HTTP or a stdio child).
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { MODERN_PROTOCOL_VERSION } from "../mcp/versions.ts";
import { CallEnded } from "../mcp/forwarded_calls.ts";
import { DISCOVER_PROBE_MS, handshake, modernMeta } from "./handshake.ts";
import { createHttpChannel, type UpstreamFetch } from "./http_transport.ts";
import {
  type CallOptions,
  type McpClient,
  UpstreamError,
  type UpstreamResult,
} from "./mcp_client.ts";
import { type RpcChannel, type RpcOutcome, SessionGoneError, untilAborted } from "./rpc_channel.ts";
import { createStdioChannel } from "./stdio_transport.ts";
import type { UpstreamConfig } from "../config/upstreams.ts";
import { listAllTools } from "./tool_listing.ts";
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";
import { deadlines } from "../deadlines.ts";

export interface McpClientDeps {
  readonly fetch?: UpstreamFetch;
  readonly log: LogSink;
  readonly now?: () => number;
  /** Waits out a stdio restart back-off (tests pass one that does not sleep). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Request ids; one source shared by every client of the process (createRequestIds), so that
   * an answer meant for another client's request, which may carry another caller's data, never
   * matches. Each client counts on its own without it.
   */
  readonly ids?: () => number;
  /** A client span per request to the upstream, its context sent on (tracing on only). */
  readonly tracing?: Tracing | undefined;
}

/** Ids 1, 2, 3…, for every client that shares them. */
export function createRequestIds(): () => number {
  let next = 1;
  return () => next++;
}

const LIST_CHANGED = "notifications/tools/list_changed";

interface Link {
  readonly epoch: number;
  readonly version: string;
}

interface Exchange {
  readonly signal: AbortSignal;
  readonly onNotification?: (method: string, params: Record<string, unknown>) => void;
}

export function createMcpClient(upstream: UpstreamConfig, deps: McpClientDeps): McpClient {
  const { title } = upstream;
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        logEvent(deps.log, {
          level: "error",
          message: "tools-changed listener failed",
          upstream: upstream.name,
          ...describeError(error),
        });
      }
    }
  };
  const channel: RpcChannel = upstream.transport.kind === "http"
    ? createHttpChannel(upstream, upstream.transport.url, upstream.transport.headers, {
      fetch: deps.fetch ?? fetch,
      log: deps.log,
    })
    : createStdioChannel(upstream, upstream.transport, {
      log: deps.log,
      now: deps.now ?? Date.now,
      sleep: deps.sleep ?? _sleep,
      onNotification: (method) => method === LIST_CHANGED && changed(),
    });

  const nextId = deps.ids ?? createRequestIds();
  const tracing = deps.tracing ?? NO_TRACING;
  const transport = upstream.transport.kind === "http" ? "tcp" : "pipe";
  const address = upstream.transport.kind === "http"
    ? new URL(upstream.transport.url).host
    : undefined;
  /**
   * A CLIENT span per request, as the MCP conventions name it (`tools/call NAME`), with the
   * upstream's name and transport; never the arguments or the result.
   */
  const traced = (method: string, tool: string | undefined, work: () => Promise<RpcOutcome>) =>
    !tracing.on ? work() : tracing.span(tool === undefined ? method : `${method} ${tool}`, {
      kind: "client",
      attributes: {
        "mcp.method.name": method,
        "gen_ai.tool.name": tool,
        "gen_ai.operation.name": method === "tools/call" ? "execute_tool" : undefined,
        "vestibule.upstream.name": upstream.name,
        "network.transport": transport,
        "server.address": address,
      },
    }, async (span) => {
      const outcome = await work();
      // Known once the first request has made the handshake.
      span.set({ "mcp.protocol.version": version ?? undefined });
      if ("error" in outcome) {
        span.fail(String(outcome.error.code));
        span.set({ "rpc.response.status_code": String(outcome.error.code) });
      }
      return outcome;
    });
  let link: Link | null = null;
  let linking: Promise<Link> | null = null;
  let version: string | null = null;
  let sessions = 0;

  /** One request, sent and answered, without the handshake. */
  const exchange = async (
    method: string,
    params: (id: number) => Record<string, unknown>,
    callVersion: string | null,
    { signal, onNotification }: Exchange,
  ): Promise<RpcOutcome> => {
    const id = nextId();
    const call = {
      id,
      method,
      params: params(id),
      version: callVersion,
      signal,
      onNotification: onNotification ?? (() => {}),
      trace: tracing.carrier(),
    };
    const cancel = () => {
      const reason = signal.reason instanceof UpstreamError ? signal.reason.message : "cancelled";
      channel.cancel(call, reason).catch(() => {});
    };
    signal.addEventListener("abort", cancel, { once: true });
    try {
      return await channel.request(call);
    } finally {
      signal.removeEventListener("abort", cancel);
    }
  };

  const connect = async (): Promise<Link> => {
    const deadline = _deadline(upstream.timeoutMs, () => _timeout(upstream));
    try {
      await channel.open(deadline.signal);
      const epoch = channel.epoch;
      const agreed = await handshake(
        upstream,
        (method, params, callVersion, probe) => {
          // stdio has no status code to say "not here": a silent legacy child must not cost
          // the whole call (MCP 2026-07-28 "stdio: Backward Compatibility").
          const probing = probe && upstream.transport.kind === "stdio"
            ? _deadline(Math.min(DISCOVER_PROBE_MS, upstream.timeoutMs), () => _timeout(upstream))
            : null;
          const signal = probing === null
            ? deadline.signal
            : AbortSignal.any([deadline.signal, probing.signal]);
          return exchange(method, () => params, callVersion, { signal })
            .finally(() => probing?.clear());
        },
        (method, params, callVersion) => channel.notify(method, params, callVersion),
      );
      version = agreed;
      sessions++;
      // A new session after the first: what the upstream offers may have changed meanwhile.
      if (sessions > 1) queueMicrotask(changed);
      return { epoch, version: agreed };
    } finally {
      deadline.clear();
    }
  };

  const relink = async (signal: AbortSignal): Promise<Link> => {
    await channel.open(signal);
    if (link !== null && link.epoch === channel.epoch) return link;
    linking ??= connect().then((made) => link = made).finally(() => linking = null);
    return await untilAborted(linking, signal);
  };
  /** The session to send in: at once while the channel is open and its handshake stands. */
  const linked = (signal: AbortSignal): Link | Promise<Link> =>
    channel.ready && link !== null && link.epoch === channel.epoch ? link : relink(signal);

  /** A request in the agreed revision, after the handshake; a lost session is renewed once. */
  const send = async (
    method: string,
    params: (id: number) => Record<string, unknown>,
    exchangeOptions: Exchange,
    meta: Readonly<Record<string, unknown>> | undefined,
    progress: boolean,
  ): Promise<RpcOutcome> => {
    for (let attempt = 1;; attempt++) {
      const known = linked(exchangeOptions.signal);
      const current = known instanceof Promise ? await known : known;
      const withMeta = (id: number) => {
        const modern = current.version === MODERN_PROTOCOL_VERSION;
        // The usual legacy call has no `_meta` of ours: its params go as they are.
        if (meta === undefined && !progress && !modern) return params(id);
        const own = {
          ...meta,
          ...(progress ? { progressToken: id } : {}),
          ...(modern ? modernMeta() : {}),
          // 2026-07-28 carries trace context in _meta, over any transport (stdio included).
          ...(modern && tracing.on ? tracing.carrier() : {}),
        };
        const body = params(id);
        return Object.keys(own).length === 0 ? body : { ...body, _meta: own };
      };
      try {
        return await exchange(method, withMeta, current.version, exchangeOptions);
      } catch (error) {
        if (!(error instanceof SessionGoneError)) throw error;
        link = null;
        if (attempt > 1) {
          throw new UpstreamError(
            "protocol",
            `${title} did not keep the session it had just started`,
          );
        }
      }
    }
  };

  /**
   * The whole-call deadline and the caller's signal, as one signal whose reason is the error: one
   * controller, which the deadline's timer and the caller's signal abort, whichever comes first.
   */
  const callSignal = (signal: AbortSignal | undefined) => {
    const controller = new AbortController();
    const deadline = deadlines.after(
      upstream.timeoutMs,
      () => controller.abort(_timeout(upstream)),
    );
    const stop = () => controller.abort(_ended(title, signal?.reason));
    if (signal?.aborted) stop();
    else signal?.addEventListener("abort", stop, { once: true });
    return {
      signal: controller.signal,
      clear: () => {
        deadline.clear();
        signal?.removeEventListener("abort", stop);
      },
    };
  };

  return {
    get version() {
      return version;
    },

    async listTools(signal) {
      const call = callSignal(signal);
      let listChanged = false;
      const onNotification = (method: string) => {
        if (method === LIST_CHANGED) listChanged = true;
      };
      try {
        return await listAllTools(upstream, deps.log, async (cursor) => {
          const outcome = await traced("tools/list", undefined, () =>
            send(
              "tools/list",
              () => cursor === undefined ? {} : { cursor },
              { signal: call.signal, onNotification },
              undefined,
              false,
            ));
          if ("error" in outcome) {
            throw new UpstreamError(
              "protocol",
              `${title} refused tools/list: ${outcome.error.message}`,
            );
          }
          return outcome.result;
        });
      } finally {
        call.clear();
        if (listChanged) changed();
      }
    },

    async callTool(name, args, options: CallOptions = {}) {
      const call = callSignal(options.signal);
      let listChanged = false;
      const onNotification = (method: string, params: Record<string, unknown>) => {
        if (method === LIST_CHANGED) listChanged = true;
        if (method !== "notifications/progress" || options.onProgress === undefined) return;
        const { progress, total, message } = params;
        if (typeof progress !== "number") return;
        options.onProgress(
          progress,
          typeof total === "number" ? total : undefined,
          typeof message === "string" ? message : undefined,
        );
      };
      try {
        const outcome = await traced("tools/call", name, () =>
          send(
            "tools/call",
            () => options.task ? { name, arguments: args, task: {} } : { name, arguments: args },
            { signal: call.signal, onNotification },
            options.meta,
            options.onProgress !== undefined,
          ));
        // An unknown tool or bad arguments is a JSON-RPC error in MCP, but for the agent it is
        // a failed tool call like any other.
        if ("error" in outcome) {
          return {
            content: [{
              type: "text",
              text: `${title} refused the call: ${outcome.error.message}`,
            }],
            isError: true,
          };
        }
        const content = outcome.result["content"];
        const task = outcome.result["task"];
        if (options.task && typeof task === "object" && task !== null && !Array.isArray(task)) {
          return { content: [], task: task as Record<string, unknown> };
        }
        if (!Array.isArray(content)) {
          throw new UpstreamError("protocol", `${title} answered tools/call without content`);
        }
        return outcome.result as UpstreamResult;
      } finally {
        call.clear();
        if (listChanged) changed();
      }
    },

    async taskRequest(method, taskId, signal) {
      const call = callSignal(signal);
      try {
        return await send(method, () => ({ taskId }), { signal: call.signal }, undefined, false);
      } finally {
        call.clear();
      }
    },

    onToolsChanged(listener) {
      listeners.push(listener);
    },

    async close() {
      link = null;
      await channel.close();
    },
  };
}

/** The caller's signal ended the call: the agent cancelled it, or the server itself ended it. */
function _ended(title: string, reason: unknown): UpstreamError {
  return reason instanceof CallEnded && reason.by === "server"
    ? new UpstreamError("ended", `The call to ${title} was ended by Vestibule: ${reason.message}`)
    : new UpstreamError("cancelled", `The call to ${title} was cancelled`);
}

function _timeout(upstream: UpstreamConfig): UpstreamError {
  return new UpstreamError(
    "timeout",
    `${upstream.title} did not answer within ${upstream.timeoutMs} ms`,
  );
}

/** A signal aborted with `reason()` after `ms`, unless cleared first. */
function _deadline(ms: number, reason: () => Error) {
  const controller = new AbortController();
  const deadline = deadlines.after(ms, () => controller.abort(reason()));
  return { signal: controller.signal, clear: () => deadline.clear() };
}

function _sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", abort, { once: true });
  });
}
