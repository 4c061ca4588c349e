// `deno task admin mail-test --to ADDRESS`: one message straight through the configured
// transport (not the outbox), so the operator sees the mail server's answer at once.
import type { Mail } from "./mailer.ts";
import { createMailer } from "./mailer.ts";
import { composeMail } from "./compose.ts";
import type { Config } from "../config/config.ts";
import type { LogSink } from "../http/request_log.ts";
import { DeliveryError } from "../outbox/sender.ts";
import { createSmtpTransport } from "./smtp.ts";
import { describeMailTransport, MailTransportError, readMailPassword } from "./transport.ts";

type MailTestResult =
  | { readonly sent: true; readonly transport: string; readonly reply: string }
  | { readonly sent: false; readonly transport: string; readonly error: string };

function _testMail(config: Config, to: string): Mail {
  return composeMail({
    to,
    subject: `Test message from Vestibule at ${new URL(config.authUrl).host}`,
    heading: "Vestibule's mail reaches you",
    paragraphs: [
      `This is a test message from Vestibule at ${config.authUrl}. Nothing needs doing: it ` +
      `shows that sign-in links, invitations and approval requests can reach this address.`,
    ],
    action: { label: "Open Vestibule", url: config.authUrl },
    reason: `You get this because an operator of this Vestibule sent a test message to this ` +
      `address ("admin mail-test"). If you did not expect it, ignore it.`,
    origin: config.authUrl,
  });
}

/** Sends the test message; the outcome is one line (the server's reply, or why not). */
export async function sendTestMail(
  config: Config,
  to: string,
  mailLog: LogSink,
  mailPrint?: (text: string) => void,
): Promise<MailTestResult> {
  const transport = describeMailTransport(config.mail);
  const mail = _testMail(config, to);
  const id = `mail-test-${crypto.randomUUID()}`;
  try {
    if (config.mail.kind !== "smtp") {
      await createMailer(config.mail, mailLog, mailPrint).send(mail, id);
      return { sent: true, transport, reply: `written to ${transport}` };
    }
    const smtp = createSmtpTransport(config.mail, {
      clientName: new URL(config.authUrl).hostname,
      password: await readMailPassword(config.mail),
    });
    return { sent: true, transport, reply: await smtp.sendReporting(mail, id) };
  } catch (error) {
    const message = (error as Error).message.replace(/\s+/g, " ");
    const kind = error instanceof DeliveryError
      ? (error.permanent ? "refused, permanently" : "failed, would be retried")
      : error instanceof MailTransportError
      ? "not configured"
      : "failed";
    return { sent: false, transport, error: `${kind}: ${message}` };
  }
}
