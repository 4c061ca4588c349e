/**
 * The SMTP transport: nodemailer speaks the protocol (RFC 5321, STARTTLS RFC 3207, AUTH
 * RFC 4954). `smtp://` upgrades with STARTTLS and refuses a server that does not offer it,
 * unless the host is loopback; `smtps://` is TLS from the first byte (RFC 8314 §3.3).
 */
import nodemailer from "nodemailer";
import type { Mail, Mailer } from "./mailer.ts";
import { type SmtpConfig } from "../config/mail_url.ts";
import { isLoopbackHost } from "../config/values.ts";
import { DeliveryError } from "../outbox/sender.ts";

/** Short enough that one attempt ends well within the outbox's lease. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export interface SmtpOptions {
  /** The name this host gives in EHLO; the auth origin's host name. */
  readonly clientName: string;
  /** The SMTP password (from the URL or VESTIBULE_MAIL_PASSWORD_FILE). */
  readonly password: string | null;
  /** Extra trusted certificates (PEM): tests trust their own self-signed server. */
  readonly ca?: readonly string[];
}

/** One SMTP conversation per mail: an outbox sends few, and nothing stays open between them. */
export function createSmtpTransport(config: SmtpConfig, options: SmtpOptions): Mailer & {
  /** The server's last reply, e.g. "250 2.0.0 Ok: queued as 12345". */
  sendReporting(mail: Mail, deliveryId: string): Promise<string>;
} {
  const transport = nodemailer.createTransport(smtpTransportOptions(config, options));
  const domain = config.from.replace(/^.*@/, "").replace(/>$/, "");

  const sendReporting = async (mail: Mail, deliveryId: string): Promise<string> => {
    try {
      const info = await transport.sendMail({
        from: config.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        // With both, nodemailer sends multipart/alternative, text first (RFC 2046 §5.1.4).
        ...(mail.html === undefined ? {} : { html: mail.html }),
        // The same id on every attempt, so a copy sent twice can be recognised as one.
        messageId: `<${deliveryId}@${domain}>`,
        date: new Date(),
        // RFC 3834 §5: no auto-replies (out-of-office) to a machine's mail.
        headers: { "Auto-Submitted": "auto-generated" },
      });
      return String(info.response);
    } catch (error) {
      throw _classify(error);
    }
  };

  return {
    async send(mail, deliveryId = crypto.randomUUID()) {
      await sendReporting(mail, deliveryId);
    },
    sendReporting,
  };
}

/**
 * Asks the server for EHLO (and STARTTLS and AUTH when configured) on a connection of its own,
 * sending nothing; throws what went wrong. The doctor and the readiness check use it.
 */
export async function verifySmtp(config: SmtpConfig, options: SmtpOptions): Promise<void> {
  const transport = nodemailer.createTransport(smtpTransportOptions(config, options));
  try {
    await transport.verify();
  } finally {
    transport.close();
  }
}

/** nodemailer's options for the configured server. */
export function smtpTransportOptions(config: SmtpConfig, options: SmtpOptions) {
  return {
    host: config.host.replace(/^\[|\]$/g, ""),
    port: config.port,
    secure: config.implicitTls,
    // A server that offers no STARTTLS is refused, except on loopback (a local relay).
    requireTLS: !config.implicitTls && !isLoopbackHost(config.host),
    // Given, so nodemailer never asks the system for its host name (no --allow-sys needed).
    name: options.clientName,
    ...(config.user === null ? {} : { auth: { user: config.user, pass: options.password ?? "" } }),
    ...(options.ca ? { tls: { ca: [...options.ca] } } : {}),
    ...TIMEOUTS,
  };
}

/** RFC 5321 §4.2.1: a 5yz reply is permanent, a 4yz reply and a lost connection are not. */
function _classify(error: unknown): DeliveryError {
  const e = error as { message?: unknown; responseCode?: unknown };
  const message = typeof e.message === "string" ? e.message : String(error);
  const code = typeof e.responseCode === "number" ? e.responseCode : null;
  return new DeliveryError(message, code !== null && code >= 500 && code < 600);
}
