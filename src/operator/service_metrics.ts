/**
 * What Vestibule measures, for the operator listener's GET /metrics (docs/operating.md: Metrics and
 * readiness). Counters move on the request path; gauges are read from the store when scraped.
 */
import type { GatewayMetrics } from "../gateway/upstream_set.ts";
import type { McpMetrics } from "../mcp/transport.ts";
import { TASK_METRIC_STATES } from "../mcp/tasks.ts";
import { ISSUING_GRANT_TYPES, type OAuthMetrics, REVOKED_BY } from "../oauth/oauth_metrics.ts";
import { RATE_LIMIT_NAMES, type RateLimitName } from "../config/rate_limit_table.ts";
import { countUnfinished, createOutbox } from "../outbox/outbox.ts";
import type { DeliveryState } from "../outbox/delivery.ts";
import { countPendingGates } from "../workspace/domain/gate_record.ts";
import type { Store } from "../store/store.ts";
import {
  Counter,
  type CounterSeries,
  type Gauge,
  Histogram,
  type HistogramSeries,
  renderGauge,
} from "./metrics.ts";
import { STORE_OPERATIONS, type StoreObserver } from "./store_metrics.ts";
import { runtime } from "../runtime/current.ts";

/** Seconds: a local store answers in well under a millisecond, a troubled one in seconds. */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/**
 * How old the counts of finished deliveries (sent, failed: kept 7 days) may be. Counting them
 * reads every one, so it happens at most this often and off the scrape's path.
 */
const FINISHED_COUNT_MAX_AGE_MS = 60 * 1000;

export interface ServiceMetrics {
  /** Called once per answered request on the three public origins; `route` is a pattern. */
  observeRequest(host: string | null, route: string, status: number, seconds: number): void;
  /** What one MCP endpoint counts: its requests by method and tool, its JSON-RPC errors. */
  mcp(endpoint: "onboarding" | "workspace"): McpMetrics;
  /** Tokens issued, refresh-token reuse and revoked grants, counted by the OAuth parts. */
  readonly oauth: OAuthMetrics;
  /** Each store operation, when main.ts wraps the store (withStoreMetrics). */
  readonly observeStore: StoreObserver;
  /** Called for each request a rate limit refused. */
  rateLimitRefused(limit: RateLimitName): void;
  /** Upstream calls by upstream and outcome, and their durations. */
  readonly gateway: GatewayMetrics;
  /** Where `vestibule_upstream_up` reads each upstream's state at scrape time. */
  watchUpstreams(read: () => readonly { readonly name: string; readonly up: boolean }[]): void;
  /** The whole exposition, gauges read now. */
  render(): Promise<string>;
}

/** `origins` maps each site's label (base, auth, api) to its origin. */
export function createServiceMetrics(deps: {
  readonly store: Store;
  readonly now: () => number;
  readonly origins: Readonly<Record<"base" | "auth" | "api", string>>;
}): ServiceMetrics {
  const requests = new Counter(
    "vestibule_http_requests_total",
    "HTTP requests answered, by origin (base, auth, api, or other for an unknown Host), route (the matched pattern, or other) and status.",
  );
  const duration = new Histogram(
    "vestibule_http_request_duration_seconds",
    "Time from a request's arrival to its answer, by origin and route.",
  );
  // Each origin, route and status found once: later requests build no label text.
  const requestSeries = new Map<
    string,
    { readonly count: CounterSeries; readonly duration: HistogramSeries }
  >();
  const tokensIssued = new Counter(
    "vestibule_oauth_tokens_issued_total",
    "Token responses with new tokens, by grant_type (authorization_code, refresh_token).",
  );
  const refreshReuse = new Counter(
    "vestibule_oauth_refresh_reuse_total",
    "Rotated refresh tokens presented again after the retry window (each revokes its grant).",
  );
  const grantsRevoked = new Counter(
    "vestibule_oauth_grants_revoked_total",
    "Grants ended by this process, by who or what ended them (client, account, code_replay, refresh_reuse, membership_ended).",
  );
  const mcpRequests = new Counter(
    "vestibule_mcp_requests_total",
    "MCP requests (messages with an id), by endpoint (onboarding, workspace), method (or other) and, for tools/call, tool (or other).",
  );
  const mcpErrors = new Counter(
    "vestibule_mcp_errors_total",
    "JSON-RPC errors the MCP endpoints answered, by endpoint and code.",
  );
  const mcpTasks = new Counter(
    "vestibule_mcp_tasks_total",
    "Tasks of the MCP endpoints entering a state, by endpoint and state: working (a tools/call answered with a task: a gated call's approval, or a relayed upstream task), completed, failed (declined, expired, or failed upstream), cancelled; each end counted once, when first reported to its client.",
  );
  for (const state of TASK_METRIC_STATES) mcpTasks.inc({ endpoint: "workspace", state }, 0);
  const storeDuration = new Histogram(
    "vestibule_store_operation_duration_seconds",
    "Time the store took to answer, by operation (a listing: the time spent waiting for its entries).",
    STORE_BUCKETS,
  );
  const storeErrors = new Counter(
    "vestibule_store_errors_total",
    "Store operations that failed (threw), by operation.",
  );
  // Every label value present from the first scrape, so a rate over it starts at zero.
  for (const operation of STORE_OPERATIONS) storeErrors.inc({ operation }, 0);
  for (const grant_type of ISSUING_GRANT_TYPES) tokensIssued.inc({ grant_type }, 0);
  refreshReuse.inc({}, 0);
  for (const by of REVOKED_BY) grantsRevoked.inc({ by }, 0);
  const refusals = new Counter(
    "vestibule_rate_limit_refusals_total",
    "Requests refused by a rate limit, by limit (the names of VESTIBULE_RATE_LIMITS).",
  );
  for (const limit of RATE_LIMIT_NAMES) refusals.inc({ limit }, 0);
  // The Host forms the host router accepts (with and without the default port), to a label.
  const labelOf = new Map<string, string>();
  for (const [label, origin] of Object.entries(deps.origins)) {
    const url = new URL(origin);
    labelOf.set(url.host.toLowerCase(), label);
    labelOf.set(`${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`, label);
  }
  const outbox = createOutbox(deps);
  const countFinished = async () => {
    const counts = new Map<DeliveryState, number>([["sent", 0], ["failed", 0]]);
    for (const delivery of await outbox.list(["sent", "failed"])) {
      counts.set(delivery.state, (counts.get(delivery.state) ?? 0) + 1);
    }
    return counts;
  };
  let lastFinished: Promise<Map<DeliveryState, number>> | null = null;
  let finishedAt = -Infinity;
  let counting = false;
  /** The last counts of finished deliveries; a newer count starts when they are too old. */
  const finishedCounts = (): Promise<Map<DeliveryState, number>> => {
    if (!counting && deps.now() - finishedAt >= FINISHED_COUNT_MAX_AGE_MS) {
      counting = true;
      finishedAt = deps.now();
      const next = countFinished().finally(() => counting = false);
      // The first scrape waits for it; later ones get the counts before until it is done.
      lastFinished ??= next;
      next.then((counts) => lastFinished = Promise.resolve(counts), () => {
        finishedAt = -Infinity;
        if (lastFinished === next) lastFinished = null;
      });
    }
    return lastFinished!;
  };
  const upstreamCalls = new Counter(
    "vestibule_upstream_calls_total",
    "Calls of upstream MCP servers' tools, by upstream (a name from VESTIBULE_UPSTREAMS) and outcome (ok, tool_error, unreachable, timeout, protocol, too_large, cancelled, ended).",
  );
  const upstreamDuration = new Histogram(
    "vestibule_upstream_call_duration_seconds",
    "Time from sending a call to an upstream to its answer, by upstream.",
  );
  let upstreams: () => readonly { readonly name: string; readonly up: boolean }[] = () => [];
  const gauges: Gauge[] = [
    {
      name: "vestibule_upstream_up",
      help:
        "Whether an upstream MCP server answered its last listing or call (1) or not (0), by upstream: calls of its tools fail while it is 0, and one never listed is missing from tool lists. Also 0 while its tools are held (VESTIBULE_UPSTREAMS names a tool it does not list).",
      read: () =>
        Promise.resolve(upstreams().map(({ name, up }) => [{ upstream: name }, up ? 1 : 0])),
    },
    {
      name: "vestibule_outbox_messages",
      help:
        "Outbox deliveries (mail and events), by state; sent and failed ones are counted at most once a minute.",
      async read() {
        // What waits comes from the due index, whatever the backlog; never from a full listing.
        const [{ pending, sending }, done] = await Promise.all([
          countUnfinished(deps.store),
          finishedCounts(),
        ]);
        return [
          [{ state: "pending" }, pending],
          [{ state: "sending" }, sending],
          [{ state: "sent" }, done.get("sent") ?? 0],
          [{ state: "failed" }, done.get("failed") ?? 0],
        ] as const;
      },
    },
    {
      name: "vestibule_approvals_pending",
      help: "Approvals (gates) waiting for a human's decision, in every business.",
      read: async () => [[{}, await countPendingGates(deps.store)]],
    },
    {
      name: "process_resident_memory_bytes",
      help: "Resident memory size in bytes.",
      read: () => Promise.resolve([[{}, runtime.rss()]]),
    },
  ];
  return {
    observeRequest(host, route, status, seconds) {
      // Unknown Hosts share one label: a client chooses Host, the series must stay few. The
      // route is a pattern of a route table (or `other`), never the raw path, for the same reason.
      const origin = labelOf.get(host?.toLowerCase() ?? "") ?? "other";
      const key = `${origin} ${route} ${status}`;
      let series = requestSeries.get(key);
      if (series === undefined) {
        series = {
          count: requests.series({ origin, route, status: String(status) }),
          duration: duration.series({ origin, route }),
        };
        requestSeries.set(key, series);
      }
      series.count.inc();
      series.duration.observe(seconds);
    },
    mcp: (endpoint) => ({
      request: (method, tool) =>
        mcpRequests.inc(tool === undefined ? { endpoint, method } : { endpoint, method, tool }),
      error: (code) => mcpErrors.inc({ endpoint, code: String(code) }),
      task: (state) => mcpTasks.inc({ endpoint, state }),
    }),
    oauth: {
      tokensIssued: (grant_type) => tokensIssued.inc({ grant_type }),
      refreshReuse: () => refreshReuse.inc(),
      grantRevoked: (by) => grantsRevoked.inc({ by }),
    },
    observeStore(operation, seconds, failed) {
      storeDuration.observe(seconds, { operation });
      if (failed) storeErrors.inc({ operation });
    },
    rateLimitRefused(limit) {
      refusals.inc({ limit });
    },
    gateway: {
      call(upstream, outcome, seconds) {
        upstreamCalls.inc({ upstream, outcome });
        upstreamDuration.observe(seconds, { upstream });
      },
    },
    watchUpstreams(read) {
      upstreams = read;
    },
    async render() {
      const read = await Promise.all(gauges.map(async (g) => renderGauge(g, await g.read())));
      return [
        requests.render(),
        duration.render(),
        mcpRequests.render(),
        mcpErrors.render(),
        mcpTasks.render(),
        tokensIssued.render(),
        refreshReuse.render(),
        grantsRevoked.render(),
        storeDuration.render(),
        storeErrors.render(),
        refusals.render(),
        upstreamCalls.render(),
        upstreamDuration.render(),
        ...read,
      ].join("");
    },
  };
}
