// The sign-in page says what waits behind it: the application asking, or an approval; and
// nothing of an approval's business before the person has signed in.
import assert from "node:assert/strict";
import { Browser } from "../support/accounts_browser.ts";
import {
  authorizeParams,
  authorizeUrl,
  oauthFixture,
  registerClient,
} from "../support/oauth_helpers.ts";

/** The text of the sign-in page's "what is waiting" notice, spaces collapsed; null without one. */
function waiting(page: string): string | null {
  const found = /<div class="notice info" role="status" id="waiting">([\s\S]*?)<\/div>/.exec(page);
  return found === null ? null : found[1]!.replace(/<[^>]+>/g, "").replace(/\s+/g, " ").trim();
}

Deno.test("the sign-in page says which application or approval waits behind it", async (t) => {
  const fx = await oauthFixture();
  const browser = new Browser();
  try {
    await t.step(
      "an agent's authorization names the application, before anything is shared",
      async () => {
        const client = await registerClient(fx, { client_name: "Ledger <Agent>" });
        const { params } = await authorizeParams(client);
        const started = await browser.get(authorizeUrl(fx, params));
        assert.equal(started.status, 302);
        const signIn = await browser.get(
          new URL(started.response.headers.get("Location")!, fx.auth).href,
        );
        assert.equal(signIn.status, 200);
        assert.equal(
          waiting(signIn.text),
          // The name as the page writes it: escaped.
          "Ledger &lt;Agent&gt; asks to work with one of your businesses. After you sign in, you choose " +
            "which business and exactly what it may do; nothing is shared before you allow it.",
        );
      },
    );

    await t.step("sign-up reached the same way says it too", async () => {
      const client = await registerClient(fx, { client_name: "Signup Agent" });
      const { params } = await authorizeParams(client);
      const returnTo = new URL(authorizeUrl(fx, params));
      const page = await browser.get(
        `${fx.auth}/sign-up?return_to=${encodeURIComponent(returnTo.pathname + returnTo.search)}`,
      );
      assert.match(
        waiting(page.text) ?? "",
        /^Signup Agent asks to work with one of your businesses/,
      );
    });

    await t.step("an approval link says an approval waits, and nothing of what it is", async () => {
      const id = crypto.randomUUID();
      const page = await browser.get(
        `${fx.auth}/sign-in?return_to=${encodeURIComponent(`/approvals/${id}`)}`,
      );
      assert.match(waiting(page.text) ?? "", /^An approval request is waiting\. Sign in to read/);
    });

    await t.step(
      "a plain sign-in, or a request that is not valid, has no such notice",
      async () => {
        assert.equal(waiting((await browser.get(`${fx.auth}/sign-in`)).text), null);
        const bogus = `/api/auth/oauth2/authorize?client_id=nobody&response_type=code`;
        const page = await browser.get(`${fx.auth}/sign-in?return_to=${encodeURIComponent(bogus)}`);
        assert.equal(page.status, 200);
        assert.equal(waiting(page.text), null);
      },
    );
  } finally {
    await fx.close();
  }
});
