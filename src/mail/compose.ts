/**
 * A mail as a person reads it, rendered once to both forms: plain text and HTML. Every mail has
 * the same four parts: a heading (what happened or is asked, as the first line), paragraphs, one
 * call to action (its URL is the mail's `link`) and a footer saying why the recipient gets it and
 * which Vestibule sent it. HTML mail carries inline styles only (mail clients drop stylesheets),
 * no images, and the link written out beside the button for clients that show no buttons.
 */
import type { Mail } from "./mailer.ts";
import { html, safeHref } from "../ui/html.ts";

export interface MailParts {
  readonly to: string;
  readonly subject: string;
  /** The first line: what happened or is asked, which business, the cost where money is involved. */
  readonly heading: string;
  readonly paragraphs: readonly string[];
  /** Text shown as written after the paragraphs (an upstream call's arguments): a <pre> in HTML. */
  readonly preformatted?: string;
  /** The one thing to do; `url` becomes the mail's link. */
  readonly action: { readonly label: string; readonly url: string };
  /** Why this address gets this mail ("because you are an owner of …"). */
  readonly reason: string;
  /** The Vestibule it comes from: its {auth_url}. */
  readonly origin: string;
}

const FONT = "font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";
const MUTED = "color:#52525b"; // 7.7:1 on white (WCAG AA needs 4.5:1)
const ACCENT = "#1d4ed8"; // white on it 6.7:1

export function composeMail(parts: MailParts): Mail {
  const { action } = parts;
  const footer = [parts.reason, `Sent by Vestibule at ${parts.origin}.`];
  // "-- " is the signature separator mail clients recognise (RFC 3676 §4.3).
  const text = [
    parts.heading,
    ...parts.paragraphs,
    ...(parts.preformatted === undefined ? [] : [parts.preformatted]),
    `${action.label}:\n${action.url}`,
    `-- \n${footer.join("\n")}`,
  ].join("\n\n") + "\n";
  return { to: parts.to, subject: parts.subject, text, html: _html(parts), link: action.url };
}

function _html(parts: MailParts): string {
  const href = safeHref(parts.action.url);
  const origin = safeHref(parts.origin);
  const paragraph = (text: string) => html`<p style="margin:0 0 16px">${text}</p>`;
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light">
        <title>${parts.subject}</title>
      </head>
      <body style="margin:0;padding:0;background:#f4f4f5">
        <table role="presentation" width="100%" cellpadding="0" cellspacing="0"
          style="background:#f4f4f5">
          <tr>
            <td align="center" style="padding:24px 12px">
              <table role="presentation" width="100%" cellpadding="0" cellspacing="0"
                style="max-width:560px;background:#ffffff;border:1px solid #e4e4e7;border-radius:8px">
                <tr>
                  <td
                    style="padding:28px 28px 8px;${FONT};font-size:16px;line-height:1.5;color:#18181b">
    <h1 style="margin:0 0 16px;font-size:20px;line-height:1.3;font-weight:600">${parts.heading}</h1>
    ${parts.paragraphs.map(paragraph)}
    ${parts.preformatted === undefined ? "" : html`
      <pre
        style="margin:0 0 16px;padding:12px;background:#f4f4f5;border-radius:6px;font-size:13px;white-space:pre-wrap;word-break:break-word">${parts
          .preformatted}</pre>
    `}
    ${href === null ? paragraph(`${parts.action.label}: ${parts.action.url}`) : html`
      <p style="margin:24px 0">
        <a href="${href}"
          style="display:inline-block;background:${ACCENT};color:#ffffff;text-decoration:none;font-weight:600;padding:12px 20px;border-radius:6px">${parts
            .action.label}</a>
      </p>
      <p
        style="margin:0 0 16px;font-size:14px;${MUTED}">If the button does not work, open this link:<br>
      <a href="${href}" style="color:${ACCENT};word-break:break-all">${parts.action.url}</a></p>
    `}
                  </td>
                </tr>
                <tr>
                  <td
                    style="padding:16px 28px 24px;border-top:1px solid #e4e4e7;${FONT};font-size:13px;line-height:1.5;${MUTED}">
                    <p style="margin:0 0 8px">${parts.reason}</p>
                    <p style="margin:0">Sent by Vestibule at ${origin === null
                      ? parts.origin
                      : html`<a href="${origin}" style="${MUTED}">${parts.origin}</a>`}.</p>
                  </td>
                </tr>
              </table>
            </td>
          </tr>
        </table>
      </body>
    </html>
  `.value.trimStart();
}
