/**
 * The upstreams' tools as one caller of the workspace sees them: per business, each upstream
 * tool in its pinned definition (upstream_views.ts), a tool held for an owner's approval listed
 * as pinned; what calling each does is upstream_tool_calls.ts's.
 */
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";
import { BoundedMap } from "../bounded_map.ts";
import { logEvent, type LogSink } from "../http/request_log.ts";
import type { ScopeCatalogue } from "../oauth/scopes.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";
import type { WorkspaceAuth } from "../workspace/mcp/bearer.ts";
import type {
  CallerTools,
  UpstreamTools,
  UpstreamWorkspaceTool,
} from "../workspace/mcp/scoped_tool.ts";
import { serves } from "./upstream_calls.ts";
import { createCallAudit } from "./call_audit.ts";
import { createUpstreamToolCalls } from "./upstream_tool_calls.ts";
import type { LiveUpstream, UpstreamSet } from "./upstream_set.ts";
import { createRelayedTasks } from "./relayed_tasks.ts";
import type { Store } from "../store/store.ts";
import { createUpstreamViews, type View } from "./upstream_views.ts";
import { MAX_SERVED_TOOL_NAME } from "../config/upstreams.ts";
import { TOOL_NAME } from "../mcp/registry.ts";

/** Callers' tool lists kept at once. */
const CACHED_VIEWS = 1_000;
/** How long a tools/list waits for an upstream's first listing before leaving it out. */
const FIRST_LISTING_WAIT_MS = 5_000;

export interface UpstreamToolsDeps {
  readonly upstreams: UpstreamSet;
  readonly services: WorkspaceServices;
  /** Where relayed upstream tasks are kept. */
  readonly store: Store;
  /** Whether the upstreams' rate limits apply (VESTIBULE_RATE_LIMITS=off: benchmarks only). */
  readonly rateLimited: boolean;
  /** Which scopes only an owner can be granted. */
  readonly scopes: Pick<ScopeCatalogue, "ownerOnly">;
  readonly log: LogSink;
  readonly now: () => number;
  /** A gated call's request keeps its trace context, for the approved call's link. */
  readonly tracing?: Tracing | undefined;
}

export function createUpstreamTools(
  deps: UpstreamToolsDeps,
): UpstreamTools & { settle(): Promise<void> } {
  const { upstreams, services, log, now } = deps;
  const tracing = deps.tracing ?? NO_TRACING;
  const views = createUpstreamViews({ services, log, now });

  // Bounded as every cache of keys others choose (a business per sign-up): a list forgotten is
  // only built again.
  const tools = new BoundedMap<string, CallerTools>(CACHED_VIEWS);
  // A call's audit entry is committed behind its answer, within a bounded number (call_audit.ts).
  // The upstream has acted whatever our store does: its entry need not wait for a disk sync.
  const audit = createCallAudit({
    appendAll: (entries) => services.audit.appendAll(entries, "deferred"),
    log,
  });
  const relayed = createRelayedTasks({
    store: deps.store,
    upstreams,
    now,
    audit: (entry) => audit.record(entry),
  });
  const toolOf = createUpstreamToolCalls({
    services,
    rateLimited: deps.rateLimited,
    audit,
    relayed,
    now,
    tracing,
  });

  // The caller's tools from each upstream's view: at once, with no await, when every view is
  // known (a tools/call's usual case).
  const viewed = (
    serving: readonly LiveUpstream[],
    auth: WorkspaceAuth,
  ): CallerTools | Promise<CallerTools> => {
    const found = serving.map((live) => views.viewOf(live, auth));
    if (!found.some((view) => view instanceof Promise)) {
      return callerTools(serving, found as View[], auth);
    }
    return Promise.all(found).then((known) => callerTools(serving, known, auth));
  };

  const callerTools = (
    serving: readonly LiveUpstream[],
    known: readonly View[],
    auth: WorkspaceAuth,
  ): CallerTools => {
    const stamp = `${auth.businessId}\n${auth.role}\n${known.map((view) => view.serial).join(",")}`;
    const cached = tools.get(stamp);
    if (cached) return cached;
    const built: UpstreamWorkspaceTool[] = [];
    // Names are unique per upstream (tool_listing.ts) and the prefixes tell upstreams apart.
    serving.forEach((live, i) => {
      for (const entry of known[i]!.entries) {
        const tool = toolOf(live, entry);
        // A role no consent can change: the tool is left out (a step-up could not open it).
        if (deps.scopes.ownerOnly(tool.scope) && auth.role !== "owner") continue;
        if (!_usableName(tool.name)) {
          logEvent(log, {
            level: "warn",
            message: "upstream tool name is unusable in the workspace: left out",
            upstream: live.config.name,
            tool: entry.tool.slice(0, 200),
          });
          continue;
        }
        built.push(tool);
      }
    });
    const result = { stamp, tools: built };
    tools.set(stamp, result);
    return result;
  };

  return {
    /**
     * Resolves once every audit entry of a call answered so far is stored (or logged), and every
     * view being built is done.
     */
    tasks: relayed,
    async settle() {
      await Promise.all([audit.settle(), views.settle()]);
    },
    forCaller(auth) {
      const serving = upstreams.upstreams.filter((live) => serves(live.config, auth.businessId));
      // A per-person upstream's listing is stored (another replica may have made it): read
      // again when it is no longer fresh.
      const waits = serving.filter((live) => live.tools === null || live.config.auth !== null);
      if (waits.length === 0) return viewed(serving, auth);
      return Promise.all(waits.map((live) => live.settled(FIRST_LISTING_WAIT_MS)))
        .then(() => viewed(serving, auth));
    },
  };
}

function _usableName(name: string): boolean {
  return name.length <= MAX_SERVED_TOOL_NAME && TOOL_NAME.test(name);
}
