// VESTIBULE_MAIL (log, file:PATH, smtp:// or smtps://) and VESTIBULE_MAIL_FROM.
import * as v from "valibot";

export type MailConfig =
  | { readonly kind: "log" }
  | { readonly kind: "file"; readonly path: string }
  | SmtpConfig;

/** `smtp://` (STARTTLS) or `smtps://` (TLS from the first byte). */
export interface SmtpConfig {
  readonly kind: "smtp";
  /** true for smtps: (port 465 by default); false for STARTTLS (587 by default). */
  readonly implicitTls: boolean;
  readonly host: string;
  readonly port: number;
  readonly user: string | null;
  /** From the URL; VESTIBULE_MAIL_PASSWORD_FILE is read at start-up instead when set. */
  readonly password: string | null;
  readonly passwordFile: string | null;
  /** VESTIBULE_MAIL_FROM: `addr@host` or `Display Name <addr@host>`. */
  readonly from: string;
}

const MAIL_FORMS = "must be log, file:PATH, smtp://[USER:PASSWORD@]HOST[:PORT] or smtps://…";

/** What the SMTP URL gives; the sender address and the password file are added after. */
export type SmtpUrl = Omit<SmtpConfig, "passwordFile" | "from">;

const SmtpUrlSchema = v.pipe(
  v.string(),
  v.check((s) => URL.canParse(s), "must be a URL: smtp://[USER:PASSWORD@]HOST[:PORT]"),
  v.transform((s) => new URL(s)),
  v.check((u) => u.hostname !== "", "must name a host"),
  v.check(
    (u) => (u.pathname === "" || u.pathname === "/") && u.search === "" && u.hash === "",
    "must not have a path, query or fragment",
  ),
  v.check((u) => u.password === "" || u.username !== "", "a password needs a user"),
  v.rawTransform(({ dataset, addIssue, NEVER }): SmtpUrl => {
    const u = dataset.value;
    try {
      const implicitTls = u.protocol === "smtps:";
      return {
        kind: "smtp",
        implicitTls,
        host: u.hostname,
        port: u.port === "" ? (implicitTls ? 465 : 587) : Number(u.port),
        user: u.username === "" ? null : decodeURIComponent(u.username),
        password: u.password === "" ? null : decodeURIComponent(u.password),
      };
    } catch {
      addIssue({ message: "user and password must be percent-encoded" });
      return NEVER;
    }
  }),
);

/** Chooses the form by its prefix, so a bad SMTP URL gets the message about what is wrong. */
export const MailSchema = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }): MailConfig | SmtpUrl => {
    const value = dataset.value;
    if (value === "log") return { kind: "log" };
    if (/^file:./.test(value)) return { kind: "file", path: value.slice("file:".length) };
    const smtp = /^smtps?:\/\//.test(value) ? v.safeParse(SmtpUrlSchema, value) : null;
    if (smtp?.success) return smtp.output;
    addIssue({ message: smtp?.issues[0].message ?? MAIL_FORMS });
    return NEVER;
  }),
);

/** `addr@host` or `Display Name <addr@host>` (the name plain or quoted); "" when unset. */
export const MailFromSchema = v.union([
  v.literal(""),
  v.pipe(
    v.string(),
    v.regex(
      /^(?:(?:"[^"\\\r\n]*"|[^"<>\r\n,;@]+?)\s*<[^\s<>@",;]+@[^\s<>@",;]+\.?[^\s<>@",;]*>|[^\s<>@",;]+@[^\s<>@",;]+)$/,
      'must be an address, optionally with a display name: "Name <addr@example.com>"',
    ),
  ),
]);

/**
 * The URL with its password replaced by `***`: what logs and error messages may show. Whatever
 * the scheme (a mistyped one is still echoed) and up to the last `@`, since a password may hold
 * an unencoded `/` or `@`.
 */
export function maskMailUrl(value: string): string {
  return value.replace(/^([A-Za-z][\w+.-]*:\/\/[^:@\/]*:).*@/, "$1***@");
}
