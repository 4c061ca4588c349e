// The transport VESTIBULE_MAIL names, opened once at start-up (main.ts, the admin's mail-test).
import { createMailer, type Mailer } from "./mailer.ts";
import type { MailConfig, SmtpConfig } from "../config/mail_url.ts";
import type { LogSink } from "../http/request_log.ts";
import { StartupError } from "../startup_error.ts";
import { runtime } from "../runtime/current.ts";

export class MailTransportError extends StartupError {
  override name = "MailTransportError";
}

/**
 * Reads VESTIBULE_MAIL_PASSWORD_FILE when set (one line; a trailing newline is not part of
 * the password) and builds the transport. Throws MailTransportError with one line.
 */
export async function openMailTransport(
  config: MailConfig,
  deps: {
    mailLog: LogSink;
    /** Where the `log` transport prints each mail for a person (main.ts: stderr). */
    mailPrint?: (text: string) => void;
    clientName: string;
    ca?: readonly string[];
  },
): Promise<Mailer> {
  if (config.kind !== "smtp") return createMailer(config, deps.mailLog, deps.mailPrint);
  // Loaded only for SMTP: nodemailer alone is 18 MiB of resident memory (bench as-run).
  const { createSmtpTransport } = await import("./smtp.ts");
  return createSmtpTransport(config, {
    clientName: deps.clientName,
    password: await readMailPassword(config),
    ...(deps.ca ? { ca: deps.ca } : {}),
  });
}

/**
 * Whether the configured transport answers: for SMTP, EHLO and AUTH on a connection of its own
 * with nothing sent (`verifySmtp`); `log` and `file:` always do. Throws what went wrong.
 */
export async function checkMailTransport(
  config: MailConfig,
  deps: { clientName: string; ca?: readonly string[] },
): Promise<void> {
  if (config.kind !== "smtp") return;
  const { verifySmtp } = await import("./smtp.ts");
  await verifySmtp(config, {
    clientName: deps.clientName,
    password: await readMailPassword(config),
    ...(deps.ca ? { ca: deps.ca } : {}),
  });
}

/** The SMTP password: VESTIBULE_MAIL_PASSWORD_FILE's one line when set, else the URL's. */
export async function readMailPassword(config: SmtpConfig): Promise<string | null> {
  if (config.passwordFile === null) return config.password;
  try {
    return (await runtime.readTextFile(config.passwordFile)).replace(/\r?\n$/, "");
  } catch (error) {
    throw new MailTransportError(
      `cannot read VESTIBULE_MAIL_PASSWORD_FILE=${JSON.stringify(config.passwordFile)}: ${
        (error as Error).name
      }`,
    );
  }
}

/** The transport as logs may show it: an SMTP URL with its password masked. */
export function describeMailTransport(config: MailConfig): string {
  switch (config.kind) {
    case "log":
      return "log";
    case "file":
      return `file:${config.path}`;
    case "smtp": {
      const user = config.user === null
        ? ""
        : `${encodeURIComponent(config.user)}${
          config.password !== null || config.passwordFile !== null ? ":***" : ""
        }@`;
      return `${config.implicitTls ? "smtps" : "smtp"}://${user}${config.host}:${config.port}`;
    }
  }
}
