/**
 * The composition root: a resolved configuration goes in, the whole service comes out. It reads
 * the files the configuration names, opens and migrates the store (unless the caller hands one
 * in), builds the process's services once and the three sites on them, and the operator
 * listener's handler when it is configured. main.ts, the black-box harness and the benchmark
 * servers all build the service here, so they run the same wiring.
 *
 * What it expects to go wrong is a StartupError (one line for the operator); having opened the
 * store, it closes it again before throwing.
 */
import type { Config } from "./config/config.ts";
import { loadWebhookTarget } from "./events/webhook_target.ts";
import { loadUpstreams, NO_UPSTREAMS } from "./gateway/upstreams_file.ts";
import { createUpstreamCalls } from "./gateway/upstream_calls.ts";
import { createGatewayParts } from "./gateway_parts.ts";
import type { UpstreamSet } from "./gateway/upstream_set.ts";
import { createUpstreamsReload } from "./gateway/upstreams_reload.ts";
import { createUpstreamTools } from "./gateway/upstream_tools.ts";
import type { Connections } from "./gateway/connect/connections.ts";
import { loadVault, missingKeyFile } from "./gateway/connect/vault.ts";
import type { UrlElicitations } from "./mcp/elicitation.ts";
import type { WorkspaceAuth } from "./workspace/mcp/bearer.ts";
import type { ConnectRoutes } from "./gateway/connect/routes.ts";
import { createCorsPolicies } from "./http/cors.ts";
import type { Handler } from "./http/handler.ts";
import { createHostRouter } from "./http/host_router.ts";
import { logEvent, type LogSink, withRequestLog } from "./http/request_log.ts";
import { withRequestTrace } from "./http/request_trace.ts";
import { openTracing } from "./tracing/open.ts";
import { type Tracing, withTraceIds } from "./tracing/tracing.ts";
import { checkMailTransport, openMailTransport } from "./mail/transport.ts";
import { createScopeCatalogue, type ScopeCatalogue } from "./oauth/scopes.ts";
import { createSigningKeys } from "./oauth/signing_keys.ts";
import { createAdminSite } from "./operator/listener.ts";
import { readAdminToken } from "./operator/api_token.ts";
import { createServiceMetrics, type ServiceMetrics } from "./operator/service_metrics.ts";
import { withStoreMetrics } from "./operator/store_metrics.ts";
import { ensurePrivateFile } from "./private_files.ts";
import { createProcessServices, type ProcessServices } from "./process_services.ts";
import { createApiSite } from "./sites/api_site.ts";
import { createAuthSite } from "./sites/auth_site.ts";
import { createPublicSite } from "./sites/public_site.ts";
import { describeDataSetting, openStore } from "./store/open.ts";
import { withStoreSpans } from "./store/traced_store.ts";
import { prepareSchema, SchemaError } from "./schema.ts";
import { type Store, StoreBusyError } from "./store/store.ts";
import { StartupError } from "./startup_error.ts";
import { loadStylesheet } from "./ui/stylesheet.ts";
import { seedDemo } from "./workspace/domain/demo.ts";
import { withAuditExport } from "./workspace/domain/audit_export.ts";
import { waitingActionsWarning } from "./workspace/domain/gate_handoffs.ts";
import { createWorkspaceServices } from "./workspace/domain/services.ts";

export interface ServiceDeps {
  /** The request log and the service's own events. */
  readonly log: LogSink;
  /** Where the `log` mailer writes mail, links included (main.ts: stderr). */
  readonly mailLog: LogSink;
  /** Where the `log` mailer prints each mail as a person reads it (main.ts: stderr). */
  readonly mailPrint?: (text: string) => void;
  /** Milliseconds since the epoch; injected so tests never sleep. */
  readonly now: () => number;
  /** A store the caller opened (tests); by default the one VESTIBULE_DATA names is opened. */
  readonly store?: Store;
  /** Certificates the SMTP transport trusts besides the system's (a test's own server). */
  readonly mailCa?: readonly string[];
  /** The events' outgoing fetch; the global one by default. */
  readonly fetch?: typeof fetch;
}

/** What the process serves, and the services it is built on. */
export interface Service extends ProcessServices {
  readonly config: Config;
  /** The store as the parts see it (measured when the operator listener is on). */
  readonly store: Store;
  /** The three public origins, behind the Host router and the request log. */
  readonly handler: Handler;
  /** The operator listener (VESTIBULE_ADMIN_LISTEN), or null when it is off. */
  readonly admin: Handler | null;
  readonly metrics: ServiceMetrics | undefined;
  /** Spans and audit records (src/tracing/): NO_TRACING unless VESTIBULE_OTEL=on. */
  readonly tracing: Tracing;
  /** People's upstream connections; null without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connections: Connections | null;
  /**
   * Reads VESTIBULE_UPSTREAMS again and serves what it says, or logs why it is refused and goes
   * on as before (upstreams_reload.ts).
   */
  reloadUpstreams(): Promise<void>;
  /** Stops the sender (unsent mail stays in the outbox) and closes the store. */
  close(): Promise<void>;
}

export async function createService(config: Config, deps: ServiceDeps): Promise<Service> {
  const { now } = deps;
  // VESTIBULE_OTEL=on: spans and audit records to the collector, and the ids on every log line.
  const tracing = await openTracing(config.otel, (fields) => logEvent(deps.log, fields as never));
  const log = tracing.on ? withTraceIds(deps.log, tracing) : deps.log;
  const data = describeDataSetting(config);
  if (config.mail.kind === "file") {
    // Created now, owner-only (it will hold live sign-in links), so the first mail cannot fail.
    const path = config.mail.path;
    await _startup(
      () => ensurePrivateFile(path),
      `cannot open VESTIBULE_MAIL=${JSON.stringify(`file:${path}`)}`,
    );
  }
  const webhook = await loadWebhookTarget(config.webhook);
  const upstreams = config.upstreamsFile === null
    ? NO_UPSTREAMS
    : await loadUpstreams(config.upstreamsFile);
  const keyProblem = missingKeyFile(upstreams, config.upstreamKeyFile);
  if (keyProblem !== null) throw new StartupError(keyProblem);
  const vault = config.upstreamKeyFile === null ? null : await loadVault(config.upstreamKeyFile);
  const adminToken = config.adminTokenFile === null
    ? null
    : await readAdminToken(config.adminTokenFile);
  // A file group or others may read, or one the system will not let this user open; a database
  // that is unreachable, refuses the login, or will not let the role make its tables.
  const opened = deps.store ?? await _startup(() => openStore(config), `cannot open ${data}`);
  try {
    // A newer store, or one other processes kept writing through every pass of a migration.
    const migrations = await _startup(() => prepareSchema(opened, now), data, [
      SchemaError,
      StoreBusyError,
    ]);
    for (const migration of migrations) {
      logEvent(log, {
        level: "info",
        message: "store migrated",
        to: migration.to,
        what: migration.summary,
      });
    }
    const mailClient = {
      clientName: new URL(config.authUrl).hostname,
      ...(deps.mailCa ? { ca: deps.mailCa } : {}),
    };
    const transport = await openMailTransport(config.mail, {
      mailLog: deps.mailLog,
      ...(deps.mailPrint ? { mailPrint: deps.mailPrint } : {}),
      ...mailClient,
    });
    const metrics = config.adminListen === null ? undefined : createServiceMetrics({
      store: opened,
      now,
      origins: { base: config.baseUrl, auth: config.authUrl, api: config.apiUrl },
    });
    // Measured only with metrics on, traced only with tracing on: otherwise the parts call the
    // store directly.
    const measured = metrics === undefined
      ? opened
      : withStoreMetrics(opened, metrics.observeStore);
    const store = tracing.on
      ? withAuditExport(withStoreSpans(measured, config.store, tracing), tracing)
      : measured;
    const services = createProcessServices({
      config,
      store,
      now,
      mailLog: deps.mailLog,
      log,
      transport,
      rateLimitRefused: metrics?.rateLimitRefused,
      webhook,
      tracing,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    // Approved work the business's systems carry out would wait for ever: say so once, here.
    if (!services.events.delivers) {
      logEvent(log, { level: "warn", message: waitingActionsWarning() });
    }
    const scopes = createScopeCatalogue(upstreams, config.workspaceTools);
    const { gateway, upstreamFetch, connections, connect, elicitations } = createGatewayParts({
      config,
      upstreams,
      vault,
      store,
      now,
      log,
      metrics,
      tracing,
      ...services,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
    const { handler, upstreamTools } = await _sites({
      config,
      log,
      now,
      store,
      metrics,
      scopes,
      gateway,
      connect,
      connections,
      tracing,
      elicitations,
      ...services,
    });
    const admin = metrics === undefined ? null : createAdminSite({
      store: opened,
      metrics,
      log,
      now,
      checkMail: () => checkMailTransport(config.mail, mailClient),
      accounts: services.accounts,
      adminToken,
    });
    return {
      ...services,
      config,
      store,
      handler,
      admin,
      metrics,
      tracing,
      connections,
      reloadUpstreams: createUpstreamsReload({
        file: config.upstreamsFile,
        keyFile: config.upstreamKeyFile,
        gateway,
        scopes,
        log,
      }),
      async close() {
        await upstreamTools?.settle();
        await gateway.close();
        upstreamFetch.close();
        await services.sender.stop();
        await opened.close();
        await tracing.shutdown();
      },
    };
  } catch (error) {
    await opened.close();
    await tracing.shutdown();
    throw error;
  }
}

/** Everything the sites are built from. */
type SiteDeps = ProcessServices & {
  readonly config: Config;
  readonly log: LogSink;
  readonly now: () => number;
  readonly store: Store;
  readonly metrics: ServiceMetrics | undefined;
  readonly scopes: ScopeCatalogue;
  readonly gateway: UpstreamSet;
  /** The pages of per-person upstream connections; none without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connect: ConnectRoutes | undefined;
  /** People's upstream connections; null without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly connections: Connections | null;
  /** URL elicitation of the workspace; none without VESTIBULE_UPSTREAM_KEY_FILE. */
  readonly elicitations: UrlElicitations<WorkspaceAuth> | undefined;
  readonly tracing: Tracing;
};

/**
 * The three sites share what is built here once (the stylesheet, the CORS policies, the signing
 * keys, the workspace services) and sit behind a Host router with the request log.
 */
async function _sites(
  deps: SiteDeps,
): Promise<
  { handler: Handler; upstreamTools: ReturnType<typeof createUpstreamTools> | undefined }
> {
  const { config, store, now, accounts, metrics } = deps;
  if (config.demo) await seedDemo(deps);
  const shared = {
    stylesheet: await loadStylesheet(),
    cors: createCorsPolicies(config.trustedOrigins),
    keys: createSigningKeys({ store, now }),
    workspace: createWorkspaceServices({
      store,
      now,
      accounts,
      mailer: deps.mailer,
      events: deps.events,
      authUrl: config.authUrl,
      upstreams: createUpstreamCalls(deps.gateway, deps.tracing),
    }),
  };
  // With a file, even one naming no upstream: a reload may add some.
  const upstreamTools = config.upstreamsFile === null ? undefined : createUpstreamTools({
    upstreams: deps.gateway,
    services: shared.workspace,
    store,
    rateLimited: config.rateLimits !== null,
    scopes: deps.scopes,
    log: deps.log,
    now,
    tracing: deps.tracing,
  });
  const sites = [
    {
      origin: config.baseUrl,
      handler: await createPublicSite({
        config,
        scopes: deps.scopes,
        upstreams: () => deps.gateway.upstreams,
        ...shared,
      }),
    },
    {
      origin: config.authUrl,
      handler: await createAuthSite({
        ...deps,
        ...shared,
        oauthMetrics: metrics?.oauth,
        mcpMetrics: metrics?.mcp("onboarding"),
      }),
    },
    {
      origin: config.apiUrl,
      handler: await createApiSite({
        ...deps,
        ...shared,
        upstreamTools,
        mcpMetrics: metrics?.mcp("workspace"),
      }),
    },
  ];
  const logged = withRequestLog(createHostRouter(sites), deps.log, metrics?.observeRequest);
  return {
    handler: deps.tracing.on ? withRequestTrace(logged, deps.tracing) : logged,
    upstreamTools,
  };
}

/**
 * Runs a start-up step whose failures are the operator's to mend, as one StartupError line that
 * says what failed first: any failure, or only those of the `expected` kinds (others are bugs).
 */
async function _startup<T>(
  step: () => Promise<T>,
  what: string,
  expected?: readonly (abstract new (...args: never[]) => Error)[],
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (expected && !expected.some((kind) => error instanceof kind)) throw error;
    throw new StartupError(`${what}: ${(error as Error).message}`);
  }
}
