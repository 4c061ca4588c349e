import { createService } from "./src/app.ts";
import { createBufferedLog, flushBeforeExit } from "./src/buffered_log.ts";
import { readEnvironment, resolveConfig } from "./src/config/config.ts";
import { checkGrantedPaths } from "./src/config/granted_paths.ts";
import { placeholderProblem, placeholdersLeft } from "./src/content/placeholders.ts";
import { checkServeConfig, configWarnings } from "./src/config/warnings.ts";
import { describeError, logEvent } from "./src/http/request_log.ts";
import { describeMailTransport } from "./src/mail/transport.ts";
import { runtime } from "./src/runtime/current.ts";
import { serve, serveAdmin } from "./src/server.ts";
import { StartupError } from "./src/startup_error.ts";
import { demoWelcome } from "./src/workspace/domain/demo_welcome.ts";

async function main(): Promise<number> {
  // One write per 50 ms or 64 KiB rather than per line, flushed before any exit.
  const stdoutLog = createBufferedLog(runtime.stdout);
  flushBeforeExit(stdoutLog);
  const log = stdoutLog.log;
  // Mail goes to stderr so the development mailer's links stay out of the request log.
  const mailLog = (line: string) => console.error(line);
  // The same mail printed for a person, the link on a line of its own (VESTIBULE_MAIL=log).
  const mailPrint = (text: string) => console.error(text);
  // Before anything listens: a SIGTERM right after "listening" must still stop cleanly.
  const stopped = Promise.withResolvers<void>();
  const stop = () => stopped.resolve();
  runtime.onSignal("SIGINT", stop);
  runtime.onSignal("SIGTERM", stop);
  // SIGHUP (systemctl reload) reads VESTIBULE_UPSTREAMS again; until the service is built, it is
  // ignored rather than left to end the process, which is what a signal without a listener does.
  let reload = () => {};
  runtime.onSignal("SIGHUP", () => reload());
  let service, server, adminServer;
  try {
    const env = readEnvironment();
    const config = resolveConfig(env, runtime.args);
    checkServeConfig(config);
    checkGrantedPaths(config, ["dataPath", "mail"]);
    for (const warning of configWarnings(config)) {
      logEvent(log, { level: "warn", message: warning });
    }
    service = await createService(config, { log, mailLog, mailPrint, now: Date.now });
    for (const file of await placeholdersLeft()) {
      logEvent(log, { level: "warn", message: placeholderProblem(file) });
    }
    server = serve(config, service.handler, log);
    if (service.admin !== null) adminServer = serveAdmin(config, service.admin, log);
    await Promise.all([server.bound, adminServer?.bound]);
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    console.error(`vestibule: ${error.line}`);
    await Promise.all([server?.shutdown(), adminServer?.shutdown()]);
    await service?.close();
    return 2;
  }
  const { config, sender } = service;
  const running = service;
  reload = () => {
    running.reloadUpstreams().catch((error: unknown) =>
      logEvent(log, { level: "error", message: "upstreams reload failed", ...describeError(error) })
    );
  };
  // Pending mail and events (left by a previous run, or waiting for their server) go out from here.
  void sender.start();
  logEvent(log, {
    level: "info",
    message: "listening",
    listen: server.addresses.map((a) => `${a.hostname}:${a.port}`),
    admin: adminServer?.addresses.map((a) => `${a.hostname}:${a.port}`)[0] ?? "off",
    origins: [config.baseUrl, config.authUrl, config.apiUrl],
    mail: describeMailTransport(config.mail),
    events: config.webhook === null ? "off" : new URL(config.webhook.url).origin,
  });
  // For a person, not a log reader: stdout stays one JSON object a line, and stderr is where the
  // log mailer writes the sign-in link these lines point to.
  if (config.demo) { for (const line of demoWelcome(config)) console.error(line); }
  await stopped.promise;
  reload = () => {};
  // New connections are refused from here; requests in flight get VESTIBULE_SHUTDOWN_GRACE.
  logEvent(log, {
    level: "info",
    message: "stopping",
    graceSeconds: config.shutdownGraceMs / 1000,
  });
  await Promise.all([server.shutdown(), adminServer?.shutdown()]);
  await service.close();
  logEvent(log, { level: "info", message: "stopped" });
  return 0;
}

/**
 * Serves, or with `admin …` runs an operator command (in a compiled binary too); the commands are
 * loaded only then, so the server does not carry them (and the doctor's nodemailer) in memory.
 */
export async function run(args: readonly string[]): Promise<number> {
  return args[0] === "admin"
    ? await (await import("./src/operator/cli/cli.ts")).adminMain(args.slice(1))
    : await main();
}

// The Node.js single executable imports this module and calls `run` itself.
if (import.meta.main) runtime.exit(await run(runtime.args));
