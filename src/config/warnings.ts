// What a resolved configuration implies for serving: refusals and start-up warnings.
import type { Config } from "./config.ts";
import { ConfigError, ORIGIN_SETTINGS, SETTINGS } from "./settings.ts";
import { isLoopbackHost } from "./values.ts";

/**
 * Refuses the development mailer, which writes every sign-in link to the log, on a deployment
 * with a public https origin, unless VESTIBULE_MAIL_LOG_PUBLIC says it is meant.
 * For the server only: the admin commands send no sign-in links.
 */
export function checkServeConfig(config: Config): void {
  if (config.mail.kind !== "log" || config.mailLogPublic) return;
  const name = ORIGIN_SETTINGS.find((n) => !isLoopbackHost(new URL(config[n]).hostname));
  if (name === undefined) return;
  throw new ConfigError(
    `${SETTINGS.mail.env}=log writes sign-in links to the log, but ${SETTINGS[name].env}=` +
      `${JSON.stringify(config[name])} is public: configure smtp:// or file:PATH, or set ` +
      `${SETTINGS.mailLogPublic.env}=on`,
  );
}

/**
 * Warnings worth a log line at start-up: plain HTTP on every interface for an https origin or
 * to the events' endpoint, and the operator listener on every interface.
 */
export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  const open = config.listen.filter((a) => a.hostname === "0.0.0.0" || a.hostname === "::");
  if (open.length > 0 && ORIGIN_SETTINGS.some((n) => config[n].startsWith("https:"))) {
    warnings.push(
      `serving plain HTTP on every interface (${
        open.map((a) => `${a.hostname}:${a.port}`).join(", ")
      }) for https origins: put a TLS proxy in front and set ${SETTINGS.listen.env}, ` +
        "e.g. 127.0.0.1:8080",
    );
  }
  const hook = config.webhook && new URL(config.webhook.url);
  if (hook && hook.protocol === "http:" && !isLoopbackHost(hook.hostname)) {
    warnings.push(
      `${SETTINGS.webhookUrl.env} is plain HTTP to ${hook.host}: events are signed but readable ` +
        "on the way; use https unless that network is private",
    );
  }
  const admin = config.adminListen;
  if (admin !== null && (admin.hostname === "0.0.0.0" || admin.hostname === "::")) {
    // /metrics and /ready have no authentication (docs/operating.md, "Metrics and readiness").
    const host = admin.hostname.includes(":") ? `[${admin.hostname}]` : admin.hostname;
    warnings.push(
      `the operator listener ${SETTINGS.adminListen.env}=${host}:${admin.port} is on ` +
        "every interface, without authentication: bind it to loopback or a private address",
    );
  }
  return warnings;
}
