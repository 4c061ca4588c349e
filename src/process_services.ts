/**
 * The process's services, shared by every site and the sender: accounts and sessions, the rate
 * limiters, the mail outbox, webhook events and the sender that delivers both. Built by the
 * composition root (src/app.ts); tests that need only these build them alone.
 */
import type { Config } from "./config/config.ts";
import type { RateLimitName } from "./config/rate_limit_table.ts";
import type { LogSink } from "./http/request_log.ts";
import { createLimiters, type Limiters } from "./http/rate_limits.ts";
import { createMailService, type MailOutbox } from "./mail/mail_outbox.ts";
import {
  createEventOutbox,
  type EventOutbox,
  NO_EVENTS,
  WEBHOOK_KIND,
  webhookDeliveryHandler,
  type WebhookTarget,
} from "./events/event_outbox.ts";
import type { Sender } from "./outbox/sender.ts";
import type { Tracing } from "./tracing/tracing.ts";
import type { Store } from "./store/store.ts";
import { createAccounts } from "./accounts/accounts.ts";
import { createEmailLinks, type EmailLinks } from "./accounts/email_links.ts";
import { createMailer, type Mailer } from "./mail/mailer.ts";
import type { Accounts, Sessions } from "./accounts/model.ts";
import { createSessions } from "./accounts/sessions.ts";

export interface ProcessServices {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  /** Every mail goes through the outbox, whatever the transport. */
  readonly mailer: MailOutbox;
  /** Sign-in and sign-up mail, shared by the forms and the onboarding tools (one rate limit). */
  readonly emailLinks: EmailLinks;
  /** Delivers the outbox; whoever serves starts it, and the service stops it on close. */
  readonly sender: Sender;
  /** Every rate limit, shared through the store or kept per process (http/rate_limits.ts). */
  readonly limiters: Limiters;
  /** Events to VESTIBULE_WEBHOOK_URL, through the same outbox as mail. */
  readonly events: EventOutbox;
}

/** Built once by createService (src/app.ts). */
export function createProcessServices(
  deps: {
    config: Pick<Config, "authUrl" | "rateLimits" | "mail">;
    store: Store;
    now: () => number;
    /** Where the `log` transport writes mail (links included: development only). */
    mailLog: LogSink;
    /** Where the `log` transport prints each mail for a person to read; nowhere by default. */
    mailPrint?: (text: string) => void;
    /** Where the sender reports failed deliveries; `mailLog` by default. */
    log?: LogSink;
    /** The transport (src/mail/transport.ts); for `log` and `file:` it may be left out. */
    transport?: Mailer;
    /** Told of each rate-limit refusal (the metrics). */
    rateLimitRefused?: ((limit: RateLimitName) => void) | undefined;
    /** Where events go (src/events/webhook_target.ts); none are recorded without it. */
    webhook?: WebhookTarget | null;
    /** The events' outgoing fetch; the global one by default. */
    fetch?: typeof fetch;
    /** A span per delivery attempt (mail, events) when tracing is on. */
    tracing?: Tracing;
  },
): ProcessServices {
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
      : createMailer(config.mail, deps.mailLog, deps.mailPrint));
  const target = deps.webhook ?? null;
  const { mailer, sender, outbox } = createMailService({
    store,
    now,
    transport,
    log: deps.log ?? deps.mailLog,
    ...(deps.tracing ? { tracing: deps.tracing } : {}),
    handlers: target === null ? {} : {
      [WEBHOOK_KIND]: webhookDeliveryHandler({ target, fetch: deps.fetch ?? fetch, now }),
    },
  });
  return {
    accounts,
    sessions: createSessions({ config, store, now, accounts }),
    mailer,
    emailLinks: createEmailLinks({ config, store, now, mailer, accounts, limiters }),
    sender,
    limiters,
    events: target === null ? NO_EVENTS : createEventOutbox({ outbox, sender, now }),
  };
}

function _missing(what: string): never {
  throw new Error(`createProcessServices needs ${what}`);
}
