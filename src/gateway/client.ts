// createMcpClient: Vestibule's MCP client for one upstream. Gives every call the upstream's
// whole-call deadline and the caller's cancellation, maps tools/list, tools/call and task
// requests onto its link (client_link.ts: the handshake, made on first use and renewed when the
// session is gone) over the transport (Streamable HTTP or a stdio child), and tells listeners
// when the upstream's tools changed.
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import { CallEnded } from "../mcp/forwarded_calls.ts";
import { ClientLink, timeout } from "./client_link.ts";
import { createHttpChannel } from "./http_transport.ts";
import type { UpstreamFetch } from "./http_session.ts";
import {
  type CallOptions,
  type McpClient,
  UpstreamError,
  type UpstreamResult,
} from "./mcp_client.ts";
import type { RpcChannel, RpcOutcome } from "./rpc_channel.ts";
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
    ? createHttpChannel(
      upstream,
      upstream.transport.url,
      upstream.transport.headers,
      deps.fetch ?? fetch,
    )
    : createStdioChannel(upstream, upstream.transport, {
      log: deps.log,
      now: deps.now ?? Date.now,
      sleep: deps.sleep ?? _sleep,
      onNotification: (method) => method === LIST_CHANGED && changed(),
    });
  const tracing = deps.tracing ?? NO_TRACING;
  const link = new ClientLink(
    upstream,
    channel,
    deps.ids ?? createRequestIds(),
    tracing,
    changed,
  );
  const traced = _clientSpans(upstream, tracing, () => link.version);

  return {
    get version() {
      return link.version;
    },

    async listTools(signal) {
      const call = _callSignal(upstream, signal);
      let listChanged = false;
      const onNotification = (method: string) => {
        if (method === LIST_CHANGED) listChanged = true;
      };
      try {
        return await listAllTools(upstream, deps.log, async (cursor) => {
          const outcome = await traced("tools/list", undefined, () =>
            link.send(
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
      const call = _callSignal(upstream, options.signal);
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
          link.send(
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
      const call = _callSignal(upstream, signal);
      try {
        return await link.send(
          method,
          () => ({ taskId }),
          { signal: call.signal },
          undefined,
          false,
        );
      } finally {
        call.clear();
      }
    },

    onToolsChanged(listener) {
      listeners.push(listener);
    },

    close: () => link.close(),
  };
}

/**
 * A CLIENT span per request, as the MCP conventions name it (`tools/call NAME`), with the
 * upstream's name and transport; never the arguments or the result.
 */
function _clientSpans(
  upstream: UpstreamConfig,
  tracing: Tracing,
  version: () => string | null,
): (method: string, tool: string | undefined, work: () => Promise<RpcOutcome>) => Promise<
  RpcOutcome
> {
  const transport = upstream.transport.kind === "http" ? "tcp" : "pipe";
  const address = upstream.transport.kind === "http"
    ? new URL(upstream.transport.url).host
    : undefined;
  return (method, tool, work) =>
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
      span.set({ "mcp.protocol.version": version() ?? undefined });
      if ("error" in outcome) {
        span.fail(String(outcome.error.code));
        span.set({ "rpc.response.status_code": String(outcome.error.code) });
      }
      return outcome;
    });
}

/**
 * The whole-call deadline and the caller's signal, as one signal whose reason is the error: one
 * controller, which the deadline's timer and the caller's signal abort, whichever comes first.
 */
function _callSignal(upstream: UpstreamConfig, signal: AbortSignal | undefined) {
  const controller = new AbortController();
  const deadline = deadlines.after(upstream.timeoutMs, () => controller.abort(timeout(upstream)));
  const stop = () => controller.abort(_ended(upstream.title, signal?.reason));
  if (signal?.aborted) stop();
  else signal?.addEventListener("abort", stop, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      deadline.clear();
      signal?.removeEventListener("abort", stop);
    },
  };
}

/** The caller's signal ended the call: the agent cancelled it, or the server itself ended it. */
function _ended(title: string, reason: unknown): UpstreamError {
  return reason instanceof CallEnded && reason.by === "server"
    ? new UpstreamError("ended", `The call to ${title} was ended by Vestibule: ${reason.message}`)
    : new UpstreamError("cancelled", `The call to ${title} was cancelled`);
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
