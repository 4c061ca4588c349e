// Starts the real server in-process on free loopback ports, built by the same composition root
// as main.ts (src/app.ts).
import { createService, type Service } from "../../../src/app.ts";
import { type Config, resolveConfig } from "../../../src/config/config.ts";
import { serve, serveAdmin } from "../../../src/server.ts";
import { openPgStore } from "../../../src/store/pg_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { type StoreFault, withFaults } from "../../../testkit/store_faults.ts";
import { startNodeHost } from "./node_host.ts";
import { openStoreFile, serverNode } from "./server_runtime.ts";
import { freePorts } from "../../../testkit/ports.ts";

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
  /** From now on the server's store meets `fault` (testkit/store_faults.ts); null ends it. */
  setStoreFault(fault: StoreFault | null): Promise<void>;
  close(): Promise<void>;
}

/** The three origins on free loopback ports. */
export function originsEnv(): Record<string, string> {
  const [base, auth, api] = freePorts(3);
  return {
    VESTIBULE_BASE_URL: `http://127.0.0.1:${base}`,
    VESTIBULE_AUTH_URL: `http://127.0.0.1:${auth}`,
    VESTIBULE_API_URL: `http://127.0.0.1:${api}`,
  };
}

export interface TestServerOptions {
  /** The server's clock (store expiry, links, rate limits); Date.now by default. */
  readonly now?: () => number;
  /** A fault the server's store meets from the start (TestServer.setStoreFault changes it). */
  readonly storeFault?: StoreFault;
  /** The store to serve from (closed with the server); a new in-memory one by default. */
  readonly store?: Store;
  /**
   * A PostgreSQL database (its `postgres://` URL) or an embedded store file (server_runtime.ts:
   * storeFile) to serve from instead of `store`, which crosses to Node.js: the server opens it
   * itself (a pool as VESTIBULE_DATA_POOL_SIZE and VESTIBULE_DATA_TIMEOUT say), and on Node.js
   * TestServer.store is the test's own pool or SQLite handle on the same database or file.
   */
  readonly dataUrl?: string;
  /** Certificates the SMTP transport trusts besides the system's (a test's own server). */
  readonly mailCa?: readonly string[];
}

/** The whole service as one in-process handler, built as main.ts builds it, before anything listens. */
export interface TestApp extends Service {
  /** Log lines the service wrote (requests and mail). */
  readonly logs: string[];
  /** From now on the service's store meets `fault`; null ends it. */
  setStoreFault(fault: StoreFault | null): void;
}

export async function createTestApp(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestApp> {
  const now = options.now ?? Date.now;
  const config = resolveConfig({
    ...originsEnv(),
    VESTIBULE_DATA: options.dataUrl ?? ":memory:",
    ...env,
  });
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  // A data URL is opened as testkit/node_host.ts opens it: its pool and deadline are the config's.
  const pg = config.postgres;
  const opened = options.store ??
    (pg !== null
      ? await openPgStore({ url: pg.url, poolSize: pg.poolSize, deadlineMs: pg.deadlineMs, now })
      : await openStoreFile(options.dataUrl ?? ":memory:", now));
  let fault = options.storeFault ?? null;
  const store = withFaults(opened, () => fault);
  const service = await createService(config, {
    log,
    mailLog: log,
    now,
    store,
    ...(options.mailCa ? { mailCa: options.mailCa } : {}),
  });
  // The store as the test reads it: the parts' store, but never measured, and without the fault.
  return {
    ...service,
    logs,
    store: opened,
    setStoreFault: (next) => void (fault = next),
  };
}

/**
 * The server on free loopback ports: in this process, or in the suite's Node.js pass on Node.js
 * (support/node_host.ts). A test's own store object cannot cross to another process: its test is
 * marked denoOnly (server_runtime.ts); a PostgreSQL database or an embedded store file goes by
 * `dataUrl`, and a store fault crosses as data (`storeFault`, TestServer.setStoreFault).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<TestServer> {
  const node = serverNode();
  if (node !== null) {
    if (options.store !== undefined) {
      throw new Error("a test's own store cannot cross to Node.js: mark the test denoOnly");
    }
    return await _startOnNode(node, env, options);
  }
  const service = await createTestApp(env, options);
  const { config, logs } = service;
  const log = (line: string) => logs.push(line);
  const server = serve(config, service.handler, log);
  const admin = service.admin === null ? null : serveAdmin(config, service.admin, log);
  await Promise.all([server.bound, admin?.bound]);
  const adminAddress = admin?.addresses[0];
  await service.sender.start();
  return {
    config,
    baseUrl: config.baseUrl,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    logs,
    store: service.store,
    adminUrl: adminAddress ? `http://${adminAddress.hostname}:${adminAddress.port}` : null,
    setStoreFault: (next) => Promise.resolve(service.setStoreFault(next)),
    async close() {
      await Promise.all([server.shutdown(), admin?.shutdown()]);
      await service.close();
    },
  };
}

async function _startOnNode(
  node: string,
  env: Record<string, string>,
  options: TestServerOptions,
): Promise<TestServer> {
  const origins = originsEnv();
  const host = await startNodeHost(node, { ...origins, ...env }, options);
  const config = resolveConfig({
    ...origins,
    VESTIBULE_DATA: options.dataUrl ?? ":memory:",
    ...env,
  });
  return {
    config,
    baseUrl: config.baseUrl,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    get logs() {
      return host.logs;
    },
    store: host.store,
    adminUrl: host.adminUrl,
    setStoreFault: (fault) => host.setStoreFault(fault),
    close: () => host.close(),
  };
}
