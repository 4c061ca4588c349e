/**
 * The upstreams as this process knows them: one MCP client each (its own sessions: replicas do
 * not share them), the tools each listed last with their definitions' hashes, and whether it
 * answers. Listing happens off the request path: at start, when an upstream says its list
 * changed, after it comes back, and once a minute; tools/list reads what was listed last, so an
 * upstream that is slow or down never delays the others (one never listed is missing from it;
 * one that stopped answering keeps its last listing, and calls of its tools say it is down). Calls go to the upstream at once and
 * end, whatever happens, as a result: a failure is an isError result in plain words. An
 * upstream whose listing lacks a tool its `gated`, `hidden` or `scopes` name is held: it serves
 * no tool until the listing has them all (unlisted_names.ts).
 */
import { logEvent, type LogSink } from "../http/request_log.ts";
import { canonicalSha256 } from "../canonical_json.ts";
import {
  type CallOptions,
  type McpClient,
  UpstreamError,
  type UpstreamResult,
  type UpstreamTool,
} from "./mcp_client.ts";
import type { UpstreamConfig, UpstreamsConfig } from "../config/upstreams.ts";
import { parseBearerChallenge } from "./connect/discovery.ts";
import { countOf } from "../count_words.ts";
import { heldProblem, logUnlisted, type UnlistedName, unlistedNames } from "./unlisted_names.ts";
import { runtime } from "../runtime/current.ts";

/** A listed tool and the SHA-256 of its canonical definition (what a pin compares). */
export interface LiveTool {
  readonly definition: UpstreamTool;
  readonly hash: string;
}

/** `held`: it answers, but lacks a tool the file names, so none of its tools are served. */
export type UpstreamState = "starting" | "ready" | "down" | "held";

/** How a call ended, for the audit log and the metrics (a bounded set). */
export type CallOutcome = "ok" | "tool_error" | "not_connected" | UpstreamError["kind"];

/** The person a call is for (whose own sign-in a per-person upstream uses). */
export interface Caller {
  readonly businessId: string;
  readonly accountId: string;
}

export interface UpstreamCallOptions extends CallOptions {
  readonly caller?: Caller;
}

export interface CallRecord {
  readonly result: UpstreamResult;
  readonly outcome: CallOutcome;
  readonly durationMs: number;
  /**
   * The person must (re)connect their own account first: the link bound to them and what to
   * ask them, for a client that declared URL elicitation (the result says the same with the
   * plain link).
   */
  readonly connect?: { readonly url: string; readonly prompt: string };
}

export interface LiveUpstream {
  readonly config: UpstreamConfig;
  readonly state: UpstreamState;
  /** Tools by upstream name as last listed (none while held); null until the first listing. */
  readonly tools: ReadonlyMap<string, LiveTool> | null;
  /** Why the last listing or call failed, or why it is held, in words (no secrets); else null. */
  readonly problem: string | null;
  /** When it stopped answering, while `down`; else null. */
  readonly downSince: number | null;
  /** Goes up whenever `tools` or `state` changes (caches key on it). */
  readonly generation: number;
  /** Resolves once the first listing ended, or after `maxWaitMs`, whichever is first. */
  settled(maxWaitMs: number): Promise<void>;
  /** Lists again now (one listing at a time). */
  refresh(): Promise<void>;
  call(
    tool: string,
    args: Record<string, unknown>,
    options: UpstreamCallOptions,
  ): Promise<CallRecord>;
  /**
   * A request about a task this upstream started (relayed_tasks.ts); absent where no task is
   * relayed: a per-person upstream's sessions are each person's, in one process.
   */
  readonly taskRequest?: McpClient["taskRequest"];
}

export interface UpstreamSet {
  /** In file order; a reload puts another list here. */
  readonly upstreams: readonly LiveUpstream[];
  get(name: string): LiveUpstream | undefined;
  /**
   * Serves a reloaded file's upstreams (already checked whole): an added one starts, a removed
   * one stops (its child ended), a changed one stops and starts again; the others go on as they
   * are. Resolves once the stopped ones are stopped.
   */
  replace(config: UpstreamsConfig): Promise<UpstreamChanges>;
  /** Stops the timers, ends the sessions and the children. */
  close(): Promise<void>;
}

/** What a reload changed, by upstream name. */
export interface UpstreamChanges {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/** What the gateway counts (src/operator/service_metrics.ts): names come from the file only. */
export interface GatewayMetrics {
  call(upstream: string, outcome: CallOutcome, seconds: number): void;
}

export interface UpstreamSetDeps {
  readonly log: LogSink;
  readonly now: () => number;
  readonly connect: (upstream: UpstreamConfig) => McpClient;
  readonly metrics?: GatewayMetrics | undefined;
  /** Milliseconds between listings of an upstream that answers (a minute by default). */
  readonly refreshMs?: number;
  /** The first wait before listing again an upstream that does not answer (a second by default). */
  readonly retryMs?: number;
  /**
   * The live upstream of one each person signs in to (connect/personal_upstream.ts); absent when
   * no VESTIBULE_UPSTREAM_KEY_FILE lets Vestibule keep their tokens.
   */
  readonly personal?: ((upstream: UpstreamConfig) => ClosableUpstream) | undefined;
}

type ClosableUpstream = LiveUpstream & { close(): Promise<void> };

/** Back-off between listings of an upstream that does not answer: doubling, up to a minute. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 60_000;

export function createUpstreamSet(config: UpstreamsConfig, deps: UpstreamSetDeps): UpstreamSet {
  // An upstream that answers 401 with a protected-resource challenge wants each person's own
  // sign-in, as if its entry said `"auth": "person"`: it is replaced by a per-person one.
  const personal = (upstream: UpstreamConfig): ClosableUpstream | null => {
    if (deps.personal === undefined) {
      logEvent(deps.log, {
        level: "error",
        message: "upstream needs each person's sign-in, and no VESTIBULE_UPSTREAM_KEY_FILE " +
          "lets Vestibule keep their tokens: its tools stay unavailable",
        upstream: upstream.name,
      });
      return null;
    }
    return deps.personal(upstream);
  };
  const discovered = (upstream: UpstreamConfig): boolean => {
    // One a reload stopped or replaced since it listed is left as it is.
    const at = upstreams.findIndex((live) => live.config === upstream);
    if (at === -1) return false;
    const next = personal({ ...upstream, auth: { client: null, scopes: null } });
    if (next === null) return false;
    void upstreams[at]!.close();
    upstreams[at] = next;
    byName.set(upstream.name, next);
    logEvent(deps.log, {
      level: "info",
      message: "upstream asks each person to sign in: each connects their own account",
      upstream: upstream.name,
    });
    return true;
  };
  const start = (upstream: UpstreamConfig) =>
    (upstream.auth === null ? null : personal(upstream)) ?? _live(upstream, deps, discovered);
  // Each upstream's entry as the file says it (a discovered one's live config says otherwise).
  let written = new Map(config.upstreams.map((upstream) => [upstream.name, upstream]));
  let upstreams: ClosableUpstream[] = config.upstreams.map(start);
  let byName = new Map(upstreams.map((live) => [live.config.name, live]));
  return {
    get upstreams() {
      return upstreams;
    },
    get: (name) => byName.get(name),
    async replace(next) {
      const kept = new Set<string>();
      const changed: string[] = [];
      const added: string[] = [];
      const following = next.upstreams.map((upstream) => {
        const before = written.get(upstream.name);
        const live = byName.get(upstream.name);
        if (before === undefined || live === undefined) added.push(upstream.name);
        else if (sameUpstream(before, upstream)) {
          kept.add(upstream.name);
          return live;
        } else changed.push(upstream.name);
        return start(upstream);
      });
      const stopping = upstreams.filter((live) => !kept.has(live.config.name));
      const removed = stopping.map((live) => live.config.name)
        .filter((name) => !changed.includes(name));
      written = new Map(next.upstreams.map((upstream) => [upstream.name, upstream]));
      upstreams = following;
      byName = new Map(upstreams.map((live) => [live.config.name, live]));
      await Promise.all(stopping.map((live) => live.close()));
      return { added, removed, changed };
    },
    async close() {
      await Promise.all(upstreams.map((live) => live.close()));
    },
  };
}

/** Whether two entries of the file say the same (secrets read from files included). */
export function sameUpstream(a: UpstreamConfig, b: UpstreamConfig): boolean {
  const plain = (_key: string, value: unknown) =>
    value instanceof Set
      ? [...value].sort()
      : value instanceof Map
      ? [...value].sort(([x], [y]) => x < y ? -1 : 1)
      : value;
  return JSON.stringify(a, plain) === JSON.stringify(b, plain);
}

function _live(
  config: UpstreamConfig,
  deps: UpstreamSetDeps,
  discovered: (upstream: UpstreamConfig) => boolean,
): ClosableUpstream {
  const { log, now } = deps;
  const refreshMs = deps.refreshMs ?? 60_000;
  const retryMinMs = deps.retryMs ?? RETRY_MIN_MS;
  const client = deps.connect(config);
  let state: UpstreamState = "starting";
  let tools: ReadonlyMap<string, LiveTool> | null = null;
  let problem: string | null = null;
  let downSince: number | null = null;
  let generation = 0;
  let listing: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let retryMs = retryMinMs;
  let closed = false;

  const schedule = (ms: number) => {
    if (closed) return;
    clearTimeout(timer);
    const next = setTimeout(() => void refresh(), ms);
    runtime.unrefTimer(next);
    timer = next;
  };

  const becomeDown = (reason: string) => {
    if (state !== "down") {
      logEvent(log, {
        level: "warn",
        message: "upstream not answering: calls of its tools fail until it does",
        upstream: config.name,
        problem: reason,
      });
      generation++;
      downSince = now();
    }
    state = "down";
    problem = reason;
  };

  const list = async () => {
    try {
      const listed = await client.listTools(AbortSignal.timeout(config.timeoutMs));
      const { tools: next, unlisted } = liveTools(config, listed);
      const held = unlisted.length === 0 ? null : heldProblem(config, unlisted);
      const nextState = held === null ? "ready" : "held";
      if (state !== nextState || !sameTools(tools, next)) generation++;
      // Once each time it becomes held or what it lacks changes, not every minute.
      if (held !== null && held !== problem) logUnlisted(log, config, unlisted);
      if (held === null && state !== "ready") {
        logEvent(log, {
          level: "info",
          message: "upstream listed",
          upstream: config.name,
          tools: next.size,
        });
      }
      tools = next;
      state = nextState;
      downSince = null;
      problem = held;
      retryMs = retryMinMs;
      schedule(refreshMs);
    } catch (error) {
      if (_wantsPersonSignIn(error) && discovered(config)) return;
      becomeDown(_describe(config, error));
      schedule(retryMs);
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    }
  };

  const refresh = (): Promise<void> => {
    listing ??= list().finally(() => listing = null);
    return listing;
  };

  client.onToolsChanged(() => void refresh());
  const firstListing = refresh();

  return {
    config,
    get state() {
      return state;
    },
    get tools() {
      return tools;
    },
    get problem() {
      return problem;
    },
    get downSince() {
      return downSince;
    },
    get generation() {
      return generation;
    },
    async settled(maxWaitMs) {
      let wait: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        firstListing,
        new Promise<void>((resolve) => wait = setTimeout(resolve, maxWaitMs)),
      ]);
      clearTimeout(wait);
    },
    refresh,
    taskRequest: (method, taskId, signal) => client.taskRequest(method, taskId, signal),
    async call(tool, args, options) {
      const started = now();
      let record: Omit<CallRecord, "durationMs">;
      try {
        const result = await client.callTool(tool, args, options);
        record = { result, outcome: result.isError === true ? "tool_error" : "ok" };
        if (state === "down") void refresh();
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        // Timed out or cancelled, the upstream may well be fine; unreachable, it is not.
        if (error.kind === "unreachable") {
          becomeDown(error.message);
          schedule(retryMinMs);
        }
        record = {
          result: { content: [{ type: "text", text: error.message }], isError: true },
          outcome: error.kind,
        };
      }
      const durationMs = now() - started;
      deps.metrics?.call(config.name, record.outcome, durationMs / 1000);
      return { ...record, durationMs };
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await client.close().catch(() => {});
    },
  };
}

function _wantsPersonSignIn(error: unknown): boolean {
  return error instanceof UpstreamError && error.kind === "unauthorized" &&
    parseBearerChallenge(error.challenge)?.resourceMetadata != null;
}

/**
 * What an upstream listed, less its hidden tools, each with its definition's hash; none at all
 * while the listing lacks a name of its `gated`, `hidden` or `scopes` (`unlisted`).
 */
export function liveTools(
  config: UpstreamConfig,
  listed: readonly UpstreamTool[],
): { tools: Map<string, LiveTool>; unlisted: UnlistedName[] } {
  const tools = new Map<string, LiveTool>();
  const unlisted = unlistedNames(config, listed.map((definition) => definition.name));
  if (unlisted.length > 0) return { tools, unlisted };
  for (const definition of listed) {
    if (config.hidden.has(definition.name)) continue;
    tools.set(definition.name, { definition, hash: canonicalSha256(definition) });
  }
  return { tools, unlisted };
}

/** Whether two listings hold the same tools with the same definitions. */
export function sameTools(
  before: ReadonlyMap<string, LiveTool> | null,
  after: ReadonlyMap<string, LiveTool>,
): boolean {
  if (before === null || before.size !== after.size) return false;
  for (const [name, tool] of after) if (before.get(name)?.hash !== tool.hash) return false;
  return true;
}

function _describe(config: UpstreamConfig, error: unknown): string {
  if (error instanceof UpstreamError) return error.message;
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return `${config.title} did not list its tools within ${
      countOf(config.timeoutMs / 1000, "second")
    }`;
  }
  return `${config.title} could not be listed: ${(error as Error).message}`;
}
