import type { MailConfig } from "../config/mail_url.ts";
import { logEvent, type LogSink } from "../http/request_log.ts";
import { ensurePrivateParent } from "../private_files.ts";
import { runtime } from "../runtime/current.ts";

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /**
   * The same mail as HTML (src/mail/compose.ts); absent in mail recorded before there was one,
   * which goes out as text alone.
   */
  readonly html?: string;
  /** The one link the mail is about (also inside `text`); tests and tools read it here. */
  readonly link: string;
}

export interface Mailer {
  /** `deliveryId`: the outbox delivery it comes from, the same on every attempt. */
  send(mail: Mail, deliveryId?: string): Promise<void>;
}

/** The transports this module provides; SMTP lives in src/mail/smtp.ts. */
export type LocalMailConfig = Exclude<MailConfig, { kind: "smtp" }>;

/**
 * `log`: one JSON line per mail (`to`, `subject`, `text`, `link`) on `log`, for tools, and the
 * mail as a person reads it on `print` (the link on a line of its own) — for local development
 * only, since whoever reads them can follow the link. `file:PATH`: one JSON object a line
 * appended to PATH (the outbox tests and local tools read), owner-only like every file holding
 * live links. Appends are serialised so concurrent mails never interleave.
 */
export function createMailer(
  config: LocalMailConfig,
  log: LogSink,
  print: (text: string) => void = () => {},
): Mailer {
  if (config.kind === "log") {
    return {
      send(mail) {
        const { to, subject, text, link } = mail;
        logEvent(log, {
          level: "info",
          message: "mail (development mailer)",
          to,
          subject,
          text,
          link,
        });
        print(printedMail(mail));
        return Promise.resolve();
      },
    };
  }
  let queue: Promise<void> = Promise.resolve();
  let directoryReady: Promise<void> | null = null;
  return {
    send(mail) {
      directoryReady ??= ensurePrivateParent(config.path);
      const line = JSON.stringify({
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        link: mail.link,
        ...(mail.html === undefined ? {} : { html: mail.html }),
      }) + "\n";
      const written = queue.then(() => directoryReady).then(() =>
        runtime.writeTextFile(config.path, line, { append: true, mode: 0o600 })
      );
      queue = written.catch(() => {});
      return written;
    },
  };
}

/**
 * A mail as the `log` transport prints it: who it is for, the subject, the link on a line of its
 * own (to copy or click in a terminal), then the text.
 */
export function printedMail(mail: Mail): string {
  const rule = "-".repeat(72);
  return [
    rule,
    `Mail to ${mail.to}`,
    `Subject: ${mail.subject}`,
    `Link:`,
    mail.link,
    "",
    mail.text.trimEnd(),
    rule,
  ].join("\n");
}
