/**
 * The gateway's parts, built once by the composition root (src/app.ts): the upstream set with
 * its one keep-alive HTTP client, and, with VESTIBULE_UPSTREAM_KEY_FILE, people's own upstream
 * connections (tokens sealed with the vault's key), their pages and the workspace's URL
 * elicitation.
 */
import type { Config } from "./config/config.ts";
import type { UpstreamsConfig } from "./config/upstreams.ts";
import { createMcpClient, createRequestIds } from "./gateway/client.ts";
import { createHttp1Fetch, type Http1Fetch } from "./gateway/http1.ts";
import { createUpstreamSet, type LiveUpstream, type UpstreamSet } from "./gateway/upstream_set.ts";
import { type Connections, createConnections } from "./gateway/connect/connections.ts";
import { createPersonalUpstream } from "./gateway/connect/personal_upstream.ts";
import { discoverUpstream } from "./gateway/connect/discovery.ts";
import type { TokenVault } from "./gateway/connect/vault.ts";
import { createConnectLinks } from "./gateway/connect/connect_links.ts";
import { createWorkspaceElicitations } from "./gateway/connect/elicitations.ts";
import { type ConnectRoutes, createConnectRoutes } from "./gateway/connect/routes.ts";
import type { LogSink } from "./http/request_log.ts";
import type { UrlElicitations } from "./mcp/elicitation.ts";
import { issuerOf } from "./oauth/issuer.ts";
import type { ServiceMetrics } from "./operator/service_metrics.ts";
import type { ProcessServices } from "./process_services.ts";
import type { Store } from "./store/store.ts";
import type { Tracing } from "./tracing/tracing.ts";
import { createAuditLog } from "./workspace/domain/audit.ts";
import type { WorkspaceAuth } from "./workspace/mcp/bearer.ts";

export interface GatewayParts {
  readonly gateway: UpstreamSet;
  /** Closed with the service, after the upstream set. */
  readonly upstreamFetch: Http1Fetch;
  /** People's upstream connections; null without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connections: Connections | null;
  /** Their pages; none without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connect: ConnectRoutes | undefined;
  /** URL elicitation of the workspace; none without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly elicitations: UrlElicitations<WorkspaceAuth> | undefined;
}

export function createGatewayParts(
  deps: Pick<ProcessServices, "accounts" | "sessions" | "mailer" | "events"> & {
    readonly config: Config;
    readonly upstreams: UpstreamsConfig;
    readonly vault: TokenVault | null;
    readonly store: Store;
    readonly now: () => number;
    readonly log: LogSink;
    readonly metrics: ServiceMetrics | undefined;
    readonly tracing: Tracing;
    /** The discovery's and the connections' outgoing fetch; the global one by default. */
    readonly fetch?: typeof fetch;
  },
): GatewayParts {
  const { config, upstreams, vault, store, now, log, metrics, tracing } = deps;
  // Each process keeps its own upstream sessions (and children); what they decide is stored.
  // HTTP upstreams go through one keep-alive HTTP/1.1 client: fetch costs about twice its CPU
  // per call (docs/benchmarks.md, Gateway).
  const upstreamFetch = createHttp1Fetch();
  // One id source for every upstream client: ids never repeat in the process (docs/gateway.md).
  const ids = createRequestIds();
  // Upstreams each person signs in to: their connections (tokens sealed with the vault's key)
  // and one live upstream each, which the set also builds for one discovered from its 401.
  // Found through the set's live upstream by name, so one a reload stopped is forgotten with it.
  const personal = new WeakMap<LiveUpstream, ReturnType<typeof createPersonalUpstream>>();
  const personUpstream = (name: string) => {
    const config = gateway.get(name)?.config;
    return config?.auth === null ? undefined : config;
  };
  // An agent's link to connect names its person; its retry's state names the call (URL
  // elicitation): both sealed with the vault's key, so every replica reads them.
  const links = vault === null ? null : createConnectLinks({ vault, now });
  const connections = vault === null ? null : createConnections({
    store,
    now,
    vault,
    log,
    audit: createAuditLog(store, now),
    events: deps.events,
    mailer: deps.mailer,
    accounts: deps.accounts,
    authUrl: config.authUrl,
    upstream: personUpstream,
    allowLoopback: config.cimdAllowLoopback,
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const gateway: UpstreamSet = createUpstreamSet(upstreams, {
    log,
    now,
    connect: (upstream) =>
      createMcpClient(upstream, { log, now, fetch: upstreamFetch, ids, tracing }),
    metrics: metrics?.gateway,
    personal: connections === null || links === null ? undefined : (upstream) => {
      const live = createPersonalUpstream(upstream, {
        store,
        log,
        now,
        connections,
        connect: (upstream, fetch) => createMcpClient(upstream, { log, now, fetch, ids, tracing }),
        fetch: upstreamFetch,
        metrics: metrics?.gateway,
        links,
        discover: (url) =>
          discoverUpstream(url, {
            allowLoopback: config.cimdAllowLoopback,
            ...(deps.fetch ? { fetch: deps.fetch } : {}),
          }),
      });
      personal.set(live, live);
      return live;
    },
  });
  const connect = connections === null || links === null ? undefined : createConnectRoutes({
    store,
    accounts: deps.accounts,
    sessions: deps.sessions,
    connections,
    upstreams: () =>
      gateway.upstreams.map((live) => live.config).filter((upstream) => upstream.auth !== null),
    issuer: issuerOf(config),
    learnTools: async (name, caller) => {
      const live = gateway.get(name);
      return live === undefined ? undefined : await personal.get(live)?.listWith(caller);
    },
    authUrl: config.authUrl,
    log,
    links,
  });
  metrics?.watchUpstreams(() =>
    gateway.upstreams.map((live) => ({ name: live.config.name, up: live.state === "ready" }))
  );
  return {
    gateway,
    upstreamFetch,
    connections,
    connect,
    elicitations: vault === null ? undefined : createWorkspaceElicitations({ store, vault, now }),
  };
}
