import type { Config } from "../config.ts";
import type { LogSink } from "../http/request_log.ts";
import type { Store } from "../store/store.ts";
import { createAccounts } from "./accounts.ts";
import { createEmailLinks, type EmailLinks } from "./email_links.ts";
import { createMailer, type Mailer } from "./mailer.ts";
import type { Accounts, Sessions } from "./model.ts";
import { createSessions } from "./sessions.ts";

export interface AccountServices {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly mailer: Mailer;
  /** Sign-in and sign-up mail, shared by the forms and the onboarding tools (one rate limit). */
  readonly emailLinks: EmailLinks;
}

/** Built once by main.ts (and the test harness) and handed to createApp. */
export function createAccountServices(
  deps: {
    config: Pick<Config, "authUrl" | "rateLimits" | "mail">;
    store: Store;
    now: () => number;
    mailLog: LogSink;
  },
): AccountServices {
  const { config, store, now } = deps;
  const accounts = createAccounts(store, now);
  const mailer = createMailer(config.mail, deps.mailLog);
  return {
    accounts,
    sessions: createSessions({ config, store, now, accounts }),
    mailer,
    emailLinks: createEmailLinks({ config, store, now, mailer, accounts }),
  };
}
