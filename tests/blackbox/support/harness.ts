// Starts the real server in-process on free loopback ports, the way main.ts wires it.
import { type AccountServices, createAccountServices } from "../../../src/accounts/services.ts";
import { createApp } from "../../../src/app.ts";
import { type Config, resolveConfig } from "../../../src/config.ts";
import type { Handler } from "../../../src/http/handler.ts";
import { loadWebhookTarget } from "../../../src/events/webhook_target.ts";
import { checkMailTransport, openMailTransport } from "../../../src/mail/transport.ts";
import { createAdminSite } from "../../../src/ops/admin_site.ts";
import { readAdminToken } from "../../../src/ops/admin_token.ts";
import { createServiceMetrics, type ServiceMetrics } from "../../../src/ops/service_metrics.ts";
import { withStoreMetrics } from "../../../src/ops/store_metrics.ts";
import { serve, serveAdmin } from "../../../src/server.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { prepareSchema } from "../../../src/store/schema.ts";
import type { Store } from "../../../src/store/store.ts";

export interface TestServer {
  readonly config: Config;
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly apiUrl: string;
  /** Log lines the server wrote. */
  readonly logs: string[];
  readonly store: Store;
  /** The operator listener's origin when VESTIBULE_ADMIN_LISTEN was given, else null. */
  readonly adminUrl: string | null;
  close(): Promise<void>;
}

/** Ports the OS says are free now; good enough for loopback tests. */
export function freePorts(count: number): number[] {
  const listeners = Array.from(
    { length: count },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of listeners) l.close();
  return ports;
}

export interface TestServerOptions {
  /** The server's clock (store expiry, links, rate limits); Date.now by default. */
  readonly now?: () => number;
  /** Wraps the server's store, e.g. to make it fail. */
  readonly wrapStore?: (store: Store) => Store;
  /** The store to serve from (closed with the server); a new in-memory one by default. */
  readonly store?: Store;
  /** Certificates the SMTP transport trusts besides the system's (a test's own server). */
  readonly mailCa?: readonly string[];
}

/** The whole app as one in-process handler, wired like main.ts, before anything listens. */
export interface TestApp extends AccountServices {
  readonly config: Config;
  readonly handler: Handler;
  /** Log lines the app wrote (requests and mail). */
  readonly logs: string[];
  readonly store: Store;
  /** Made when VESTIBULE_ADMIN_LISTEN is given, as main.ts does. */
  readonly metrics: ServiceMetrics | undefined;
}

export async function createTestApp(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestApp> {
  const now = options.now ?? Date.now;
  const [base, auth, api] = freePorts(3);
  const config = resolveConfig({
    VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
    VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
    VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
    VESTIBULE_DATA: ":memory:",
    ...env,
  });
  const logs: string[] = [];
  const opened = options.store ?? await openKvStore(":memory:", now);
  await prepareSchema(opened, now);
  const store = options.wrapStore?.(opened) ?? opened;
  const log = (line: string) => logs.push(line);
  const transport = await openMailTransport(config.mail, {
    mailLog: log,
    clientName: "localhost",
    ...(options.mailCa ? { ca: options.mailCa } : {}),
  });
  const webhook = await loadWebhookTarget(config.webhook);
  const metrics = config.adminListen === null ? undefined : createServiceMetrics({
    store,
    now,
    origins: { base: config.baseUrl, auth: config.authUrl, api: config.apiUrl },
  });
  const served = metrics === undefined ? store : withStoreMetrics(store, metrics.observeStore);
  const services = createAccountServices({
    config,
    store: served,
    now,
    mailLog: log,
    transport,
    rateLimitRefused: metrics?.rateLimitRefused,
    webhook,
  });
  const handler = await createApp({ config, log, now, store: served, ...services, metrics });
  return { config, handler, logs, store, metrics, ...services };
}

export async function startTestServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const { config, handler, logs, store, sender, metrics, accounts } = await createTestApp(
    env,
    options,
  );
  const log = (line: string) => logs.push(line);
  const now = options.now ?? Date.now;
  const adminToken = config.adminTokenFile === null
    ? null
    : await readAdminToken(config.adminTokenFile);
  const server = serve(config, handler, log);
  const admin = metrics === undefined ? null : serveAdmin(
    config,
    createAdminSite({
      store,
      metrics,
      log,
      now,
      accounts,
      adminToken,
      checkMail: () =>
        checkMailTransport(config.mail, {
          clientName: "localhost",
          ...(options.mailCa ? { ca: options.mailCa } : {}),
        }),
    }),
    log,
  );
  const adminAddress = admin?.addresses[0];
  await sender.start();
  return {
    config,
    baseUrl: config.baseUrl,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    logs,
    store,
    adminUrl: adminAddress ? `http://${adminAddress.hostname}:${adminAddress.port}` : null,
    async close() {
      await Promise.all([server.shutdown(), admin?.shutdown()]);
      await sender.stop();
      store.close();
    },
  };
}
