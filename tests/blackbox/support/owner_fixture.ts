// A real server with a file outbox and no rate limits, and an owner who signed up through the
// forms: the start of the tests of the pages people use.
import { createAccounts } from "../../../src/accounts/accounts.ts";
import type { Account, Accounts, Business } from "../../../src/accounts/model.ts";
import { Browser, signUpThroughForms, tempOutbox } from "./accounts_browser.ts";
import { startTestServer, type TestServer } from "./harness.ts";

export interface OwnerFixture {
  readonly server: TestServer;
  readonly auth: string;
  readonly outbox: Awaited<ReturnType<typeof tempOutbox>>;
  readonly accounts: Accounts;
  /** Signed in as the owner. */
  readonly owner: Browser;
  readonly account: Account;
  readonly business: Business;
}

export async function ownerFixture(email: string, businessName: string): Promise<OwnerFixture> {
  const outbox = await tempOutbox();
  const server = await startTestServer({
    VESTIBULE_MAIL: outbox.env,
    VESTIBULE_RATE_LIMITS: "off",
  });
  const auth = server.authUrl;
  const accounts = createAccounts(server.store, Date.now);
  const owner = new Browser();
  await signUpThroughForms(owner, auth, outbox, email, businessName);
  const account = (await accounts.findAccountByEmail(email))!;
  const business = (await accounts.listBusinessesOf(account.id))[0]!.business;
  return { server, auth, outbox, accounts, owner, account, business };
}
