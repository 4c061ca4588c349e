import type { MailConfig } from "../config/mail_url.ts";
import { logEvent, type LogSink } from "../http/request_log.ts";
import { ensurePrivateParent } from "../private_files.ts";

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
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
 * `log`: one JSON line per mail, link included, on the given sink — for local development
 * only, since whoever reads the log can follow the link. `file:PATH`: one JSON object a line
 * appended to PATH (the outbox tests and local tools read), owner-only like every file holding
 * live links. Appends are serialised so concurrent mails never interleave.
 */
export function createMailer(config: LocalMailConfig, log: LogSink): Mailer {
  if (config.kind === "log") {
    return {
      send(mail) {
        logEvent(log, { level: "info", message: "mail (development mailer)", ...mail });
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
      }) + "\n";
      const written = queue.then(() => directoryReady).then(() =>
        Deno.writeTextFile(config.path, line, { append: true, mode: 0o600 })
      );
      queue = written.catch(() => {});
      return written;
    },
  };
}
