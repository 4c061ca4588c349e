import type { Config, RateLimitName } from "../config.ts";
import type { LogSink } from "../http/request_log.ts";
import { createLimiters, type Limiters } from "../http/rate_limits.ts";
import { createMailService, type MailOutbox } from "../mail/mail_outbox.ts";
import type { Sender } from "../outbox/sender.ts";
import type { Store } from "../store/store.ts";
import { createAccounts } from "./accounts.ts";
import { createEmailLinks, type EmailLinks } from "./email_links.ts";
import { createMailer, type Mailer } from "./mailer.ts";
import type { Accounts, Sessions } from "./model.ts";
import { createSessions } from "./sessions.ts";

export interface AccountServices {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  /** Every mail goes through the outbox, whatever the transport. */
  readonly mailer: MailOutbox;
  /** Sign-in and sign-up mail, shared by the forms and the onboarding tools (one rate limit). */
  readonly emailLinks: EmailLinks;
  /** Delivers the outbox; main.ts starts it and stops it on shutdown. */
  readonly sender: Sender;
  /** Every rate limit, shared through the store or kept per process (http/rate_limits.ts). */
  readonly limiters: Limiters;
}

/** Built once by main.ts (and the test harness) and handed to createApp. */
export function createAccountServices(
  deps: {
    config: Pick<Config, "authUrl" | "rateLimits" | "mail">;
    store: Store;
    now: () => number;
    /** Where the `log` transport writes mail (links included: development only). */
    mailLog: LogSink;
    /** Where the sender reports failed deliveries; `mailLog` by default. */
    log?: LogSink;
    /** The transport (src/mail/transport.ts); for `log` and `file:` it may be left out. */
    transport?: Mailer;
    /** Told of each rate-limit refusal (the metrics). */
    rateLimitRefused?: ((limit: RateLimitName) => void) | undefined;
  },
): AccountServices {
  const { config, store, now } = deps;
  const accounts = createAccounts(store, now);
  const limiters = createLimiters({
    limits: config.rateLimits,
    store,
    now,
    refused: deps.rateLimitRefused,
  });
  const transport = deps.transport ??
    (config.mail.kind === "smtp"
      ? _missing("an SMTP transport (openMailTransport)")
      : createMailer(config.mail, deps.mailLog));
  const { mailer, sender } = createMailService({
    store,
    now,
    transport,
    log: deps.log ?? deps.mailLog,
  });
  return {
    accounts,
    sessions: createSessions({ config, store, now, accounts }),
    mailer,
    emailLinks: createEmailLinks({ config, store, now, mailer, accounts, limiters }),
    sender,
    limiters,
  };
}

function _missing(what: string): never {
  throw new Error(`createAccountServices needs ${what}`);
}
