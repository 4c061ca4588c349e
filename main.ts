import { createAccountServices } from "./src/accounts/services.ts";
import { createBufferedLog, flushBeforeExit } from "./src/buffered_log.ts";
import { createApp } from "./src/app.ts";
import { readEnvironment, resolveConfig } from "./src/config/config.ts";
import { maskDataUrl } from "./src/config/data_url.ts";
import { checkGrantedPaths } from "./src/config/granted_paths.ts";
import { ConfigError } from "./src/config/settings.ts";
import { checkServeConfig, configWarnings } from "./src/config/warnings.ts";
import {
  checkMailTransport,
  describeMailTransport,
  MailTransportError,
  openMailTransport,
} from "./src/mail/transport.ts";
import { loadWebhookTarget, WebhookTargetError } from "./src/events/webhook_target.ts";
import { ensurePrivateFile } from "./src/private_files.ts";
import { logEvent } from "./src/http/request_log.ts";
import { createAdminSite } from "./src/ops/admin_site.ts";
import { AdminTokenError, readAdminToken } from "./src/ops/admin_token.ts";
import { createServiceMetrics } from "./src/ops/service_metrics.ts";
import { withStoreMetrics } from "./src/ops/store_metrics.ts";
import { ListenError, serve, serveAdmin } from "./src/server.ts";
import { TemplateError } from "./src/site/templates.ts";
import { openStore } from "./src/store/open.ts";
import { prepareSchema, SchemaError } from "./src/store/schema.ts";
import { StoreBusyError } from "./src/store/store.ts";

async function main(): Promise<number> {
  let config;
  const env = readEnvironment();
  try {
    config = resolveConfig(env, Deno.args);
    checkServeConfig(config);
    checkGrantedPaths(config, ["dataPath", "mail"]);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`vestibule: configuration error: ${error.message}`);
    return 2;
  }
  // One write per 50 ms or 64 KiB rather than per line, flushed before any exit.
  const stdoutLog = createBufferedLog(Deno.stdout);
  flushBeforeExit(stdoutLog);
  const log = stdoutLog.log;
  for (const warning of configWarnings(config, env)) {
    logEvent(log, { level: "warn", message: warning });
  }
  if (config.mail.kind === "file") {
    // Created now, owner-only (it will hold live sign-in links), so the first mail cannot fail.
    try {
      await ensurePrivateFile(config.mail.path);
    } catch (error) {
      console.error(
        `vestibule: cannot open VESTIBULE_MAIL=${JSON.stringify(`file:${config.mail.path}`)}: ${
          (error as Error).message
        }`,
      );
      return 2;
    }
  }
  let webhook;
  try {
    webhook = await loadWebhookTarget(config.webhook);
  } catch (error) {
    if (!(error instanceof WebhookTargetError)) throw error;
    console.error(`vestibule: ${error.message}`);
    return 2;
  }
  let adminToken = null;
  try {
    if (config.adminTokenFile !== null) adminToken = await readAdminToken(config.adminTokenFile);
  } catch (error) {
    if (!(error instanceof AdminTokenError)) throw error;
    console.error(`vestibule: ${error.message}`);
    return 2;
  }
  let store;
  try {
    store = await openStore(config);
  } catch (error) {
    // A file group or others may read, or one the system will not let this user open; a
    // database that is unreachable, refuses the login, or will not let the role make its tables.
    console.error(
      `vestibule: cannot open VESTIBULE_DATA=${JSON.stringify(maskDataUrl(config.dataPath))}: ${
        (error as Error).message
      }`,
    );
    return 2;
  }
  try {
    for (const migration of await prepareSchema(store, Date.now)) {
      logEvent(log, {
        level: "info",
        message: "store migrated",
        to: migration.to,
        what: migration.summary,
      });
    }
  } catch (error) {
    // A newer store, or one other processes kept writing through every pass of a migration.
    if (!(error instanceof SchemaError || error instanceof StoreBusyError)) throw error;
    console.error(
      `vestibule: VESTIBULE_DATA=${JSON.stringify(maskDataUrl(config.dataPath))}: ${error.message}`,
    );
    await store.close();
    return 2;
  }
  // Mail goes to stderr so the development mailer's links stay out of the request log.
  const mailLog = (line: string) => console.error(line);
  const mailClientName = new URL(config.authUrl).hostname;
  let transport;
  try {
    transport = await openMailTransport(config.mail, { mailLog, clientName: mailClientName });
  } catch (error) {
    if (!(error instanceof MailTransportError)) throw error;
    console.error(`vestibule: ${error.message}`);
    await store.close();
    return 2;
  }
  const metrics = config.adminListen === null ? undefined : createServiceMetrics({
    store,
    now: Date.now,
    origins: { base: config.baseUrl, auth: config.authUrl, api: config.apiUrl },
  });
  // Measured only with metrics on: otherwise the parts call the store directly.
  const served = metrics === undefined ? store : withStoreMetrics(store, metrics.observeStore);
  const services = createAccountServices({
    config,
    store: served,
    now: Date.now,
    mailLog,
    log,
    transport,
    rateLimitRefused: metrics?.rateLimitRefused,
    webhook,
  });
  let handler;
  try {
    handler = await createApp({ config, log, now: Date.now, store: served, ...services, metrics });
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    console.error(`vestibule: template error: ${error.message}`);
    await store.close();
    return 2;
  }
  // Before anything listens: a SIGTERM right after "listening" must still stop cleanly.
  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  let server, adminServer;
  try {
    server = serve(config, handler, log);
    if (metrics !== undefined && config.adminListen !== null) {
      const checkMail = () => checkMailTransport(config.mail, { clientName: mailClientName });
      const admin = createAdminSite({
        store,
        metrics,
        log,
        now: Date.now,
        checkMail,
        accounts: services.accounts,
        adminToken,
      });
      adminServer = serveAdmin(config, admin, log);
    }
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    console.error(`vestibule: ${error.message}`);
    await server?.shutdown();
    await store.close();
    return 2;
  }
  // Pending mail and events (left by a previous run, or waiting for their server) go out from here.
  void services.sender.start();
  logEvent(log, {
    level: "info",
    message: "listening",
    listen: server.addresses.map((a) => `${a.hostname}:${a.port}`),
    admin: adminServer?.addresses.map((a) => `${a.hostname}:${a.port}`)[0] ?? "off",
    origins: [config.baseUrl, config.authUrl, config.apiUrl],
    mail: describeMailTransport(config.mail),
    events: webhook === null ? "off" : new URL(webhook.url).origin,
  });
  await stopped.promise;
  // New connections are refused from here; requests in flight get VESTIBULE_SHUTDOWN_GRACE.
  logEvent(log, {
    level: "info",
    message: "stopping",
    graceSeconds: config.shutdownGraceMs / 1000,
  });
  await Promise.all([server.shutdown(), adminServer?.shutdown()]);
  await services.sender.stop();
  await store.close();
  logEvent(log, { level: "info", message: "stopped" });
  return 0;
}

// `vestibule admin …` runs the operator commands in the compiled binary too; loaded only then,
// so the server does not carry the admin commands (and the doctor's nodemailer) in memory.
if (import.meta.main) {
  Deno.exit(
    Deno.args[0] === "admin"
      ? await (await import("./src/admin/cli.ts")).adminMain(Deno.args.slice(1))
      : await main(),
  );
}
