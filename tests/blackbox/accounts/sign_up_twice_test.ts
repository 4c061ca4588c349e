// Signing up twice makes one business: a sign-up link after a later one for the same address
// and business name creates nothing (and says where to go), a link whose business the account
// already owns only signs in; and where a person chooses among businesses that do share a name
// (the account page, the consent's choice), each is told apart.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { Browser, followLink, hiddenField, submitForm } from "../support/accounts_browser.ts";
import {
  authorizeParams,
  authorizeUrl,
  oauthFixture,
  registerClient,
} from "../support/oauth_helpers.ts";

Deno.test("signing up twice makes one business, and same-named businesses are told apart", async (t) => {
  const fx = await oauthFixture();
  const accounts = createAccounts(fx.server.store, fx.clock.now);
  const auth = fx.auth;
  /** Asks for a sign-up link; returns the link mailed. */
  const askSignUp = async (browser: Browser, email: string, business: string) => {
    const sent = await submitForm(browser, `${auth}/sign-up`, `${auth}/sign-up`, {
      email,
      business,
    });
    assert.equal(sent.status, 200, sent.text);
    return (await fx.outbox.read()).at(-1)!.link;
  };
  const businessesOf = async (email: string) => {
    const account = await accounts.findAccountByEmail(email);
    return account === null ? [] : await accounts.listBusinessesOf(account.id);
  };
  try {
    await t.step(
      "the earlier link, opened after the later one was used, signs in only",
      async () => {
        const browser = new Browser();
        const first = await askSignUp(browser, "owner@example.com", "Acme Bakery");
        const second = await askSignUp(browser, "owner@example.com", "Acme Bakery");
        const created = await followLink(browser, second);
        assert.equal(created.status, 303);
        assert.equal((await businessesOf("owner@example.com")).length, 1);

        const page = await browser.get(first);
        assert.equal(page.status, 200);
        assert.match(page.text, /id="business-exists"/);
        assert.match(page.text, /creates no other business/);
        const signedIn = await browser.post(`${auth}/sign-in/verify`, {
          csrf: hiddenField(page.text, "csrf"),
          token: hiddenField(page.text, "token"),
        });
        assert.equal(signedIn.status, 303);
        assert.equal(signedIn.response.headers.get("Location"), `${auth}/account`);
        assert.equal((await businessesOf("owner@example.com")).length, 1, "no second business");
      },
    );

    await t.step(
      "the same name asked for again later signs in to the business there is",
      async () => {
        const browser = new Browser();
        const again = await askSignUp(browser, "owner@example.com", "  acme   BAKERY ");
        assert.equal((await followLink(browser, again)).status, 303);
        assert.equal((await businessesOf("owner@example.com")).length, 1);
        assert.equal((await browser.get(`${auth}/account`)).status, 200, "signed in");
      },
    );

    await t.step(
      "an earlier link before any was used creates nothing and says where to go",
      async () => {
        const browser = new Browser();
        const first = await askSignUp(browser, "bravo@example.com", "Bravo Books");
        const second = await askSignUp(browser, "bravo@example.com", "Bravo Books");
        const page = await browser.get(first);
        assert.equal(page.status, 410);
        assert.match(page.text, /id="superseded"/);
        assert.match(page.text, /Open the newest mail about Bravo Books/);
        // Posted anyway (with the form token of the newest link's page): still nothing.
        const newest = await browser.get(second);
        const token = new URL(first).searchParams.get("token")!;
        const refused = await browser.post(`${auth}/sign-in/verify`, {
          csrf: hiddenField(newest.text, "csrf"),
          token,
        });
        assert.equal(refused.status, 410);
        assert.deepEqual(await businessesOf("bravo@example.com"), []);
        assert.equal((await followLink(browser, second)).status, 303);
        assert.equal((await businessesOf("bravo@example.com")).length, 1);
        // A different business is not a repeat: it is created.
        const other = await askSignUp(browser, "bravo@example.com", "Bravo Cafe");
        assert.equal((await followLink(browser, other)).status, 303);
        assert.equal((await businessesOf("bravo@example.com")).length, 2);
      },
    );

    await t.step("two businesses of one name are told apart where a person chooses", async () => {
      // As an operator (or a sign-up before this rule) may have made them.
      const owner = await accounts.findAccountByEmail("owner@example.com");
      const twin = await accounts.createBusiness(owner!.id, "Acme Bakery");
      const [mine] = (await businessesOf("owner@example.com"))
        .filter((b) => b.business.id !== twin.id);
      const browser = new Browser();
      const link = await askSignUp(browser, "owner@example.com", "Acme Bakery");
      assert.equal((await followLink(browser, link)).status, 303);
      const shortIds = [mine!.business.id.slice(0, 8), twin.id.slice(0, 8)];

      const account = await browser.get(`${auth}/account`);
      const headings = [...account.text.matchAll(/<h3 id="business-[^"]+">([^<]*)<\/h3>/g)]
        .map((m) => m[1]!);
      assert.equal(headings.length, 2);
      assert.notEqual(headings[0], headings[1]);
      for (const id of shortIds) {
        assert.ok(headings.some((h) => h.includes(`id ${id}`)), headings.join(" | "));
      }

      const client = await registerClient(fx);
      const { params } = await authorizeParams(client);
      const choose = await browser.get(authorizeUrl(fx, params));
      assert.equal(choose.status, 200, choose.text);
      const labels = [...choose.text.matchAll(/name="business"[^>]*>\s*<span>([^<]*)</g)]
        .map((m) => m[1]!.trim());
      assert.equal(labels.length, 2, choose.text);
      assert.notEqual(labels[0], labels[1]);
      for (const id of shortIds) {
        assert.ok(labels.some((l) => l.includes(`id ${id}`)), labels.join());
      }
    });
  } finally {
    await fx.close();
  }
});
