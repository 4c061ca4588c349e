import type { Config } from "../config.ts";
import type { LogSink } from "../http/request_log.ts";
import type { Store } from "../store/store.ts";
import { createAccounts } from "./accounts.ts";
import { createMailer, type Mailer } from "./mailer.ts";
import type { Accounts, Sessions } from "./model.ts";
import { createSessions } from "./sessions.ts";

export interface AccountServices {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly mailer: Mailer;
}

/** Built once by main.ts (and the test harness) and placed in AppDeps. */
export function createAccountServices(
  deps: { config: Config; store: Store; now: () => number; mailLog: LogSink },
): AccountServices {
  const { config, store, now } = deps;
  const accounts = createAccounts(store, now);
  return {
    accounts,
    sessions: createSessions({ config, store, now, accounts }),
    mailer: createMailer(config.mail, deps.mailLog),
  };
}
