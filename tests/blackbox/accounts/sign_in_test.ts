import assert from "node:assert/strict";
import { hashSecret } from "../../../src/secrets.ts";
import { manualClock } from "../../store/store_contract.ts";
import {
  Browser,
  followLink,
  hiddenField,
  signUpThroughForms,
  submitForm,
  tempOutbox,
} from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";

Deno.test("sign-up and sign-in through the forms", async (t) => {
  const outbox = await tempOutbox();
  const clock = manualClock(Date.now());
  // Many mails to one address here; the limits have their own test.
  const server = await startTestServer(
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
    { now: clock.now },
  );
  const auth = server.authUrl;
  try {
    await t.step("sign-up sends a link; GET shows a button and creates nothing", async () => {
      const browser = new Browser();
      const sent = await submitForm(browser, `${auth}/sign-up`, `${auth}/sign-up`, {
        email: "Owner@Example.com",
        business: "Acme Bakery",
      });
      assert.equal(sent.status, 200);
      assert.match(sent.text, /We have sent a message to <strong>owner@example.com<\/strong>/);
      const [mail] = await outbox.read();
      assert.equal(mail?.to, "owner@example.com");
      assert.match(mail!.link, new RegExp(`^${auth}/sign-in/verify\\?token=[A-Za-z0-9_-]{43}$`));
      assert.ok(mail!.text.includes(mail!.link));
      for (let i = 0; i < 2; i++) {
        const confirm = await browser.get(mail!.link);
        assert.equal(confirm.status, 200);
        assert.match(confirm.text, /Create the business <strong>Acme Bakery<\/strong>/);
        assert.match(confirm.text, /<form method="post" action="\/sign-in\/verify">/);
      }
      assert.equal((await browser.get(`${auth}/account`)).status, 303, "not signed in yet");
    });

    await t.step("following the link creates the account and business, signed in", async () => {
      const browser = new Browser();
      const [mail] = await outbox.read();
      const done = await followLink(browser, mail!.link);
      assert.equal(done.status, 303);
      assert.equal(done.response.headers.get("Location"), `${auth}/account?welcome`);
      const cookie = done.response.headers.getSetCookie().find((c) =>
        c.startsWith(`vestibule_session_${new URL(auth).port}=`)
      );
      assert.ok(cookie, "session cookie set");
      assert.match(cookie, /; Path=\/(;|$)/);
      assert.match(cookie, /; HttpOnly(;|$)/);
      assert.match(cookie, /; SameSite=Lax(;|$)/);
      assert.doesNotMatch(cookie, /Secure/, "plain-http loopback origin: no Secure");
      assert.doesNotMatch(cookie, /Domain=/i);
      const account = await browser.get(`${auth}/account`);
      assert.equal(account.status, 200);
      assert.match(account.text, /owner@example.com/);
      assert.match(account.text, /<h3 id="business-[^"]+">Acme Bakery<\/h3>/);
      assert.match(account.text, /<dt>Your role<\/dt>\s*<dd>Owner<\/dd>/);
      assert.equal(account.response.headers.get("Cache-Control"), "no-store");
    });

    await t.step(
      "{auth_url}/ leads to the account when signed in, to sign-in otherwise",
      async () => {
        const browser = new Browser();
        const signedOut = await browser.get(`${auth}/`);
        assert.equal(signedOut.status, 303);
        assert.equal(signedOut.response.headers.get("Location"), `${auth}/sign-in`);
        await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
          email: "owner@example.com",
        });
        assert.equal((await followLink(browser, (await outbox.read()).at(-1)!.link)).status, 303);
        const signedIn = await browser.get(`${auth}/`);
        assert.equal(signedIn.status, 303);
        assert.equal(signedIn.response.headers.get("Location"), `${auth}/account`);
        assert.equal(signedIn.response.headers.get("Cache-Control"), "no-store");
      },
    );

    await t.step("the same e-mail signing up again adds another business", async () => {
      const browser = new Browser();
      await signUpThroughForms(browser, auth, outbox, "owner@example.com", "Acme Catering");
      const account = await browser.get(`${auth}/account`);
      assert.match(account.text, /Acme Bakery/);
      assert.match(account.text, /Acme Catering/);
      const owners = [];
      for await (const e of server.store.list(["accounts", "email"])) owners.push(e.key);
      assert.equal(owners.length, 1, "still one account");
    });

    await t.step("a sign-in link works once; the second use is refused", async () => {
      const browser = new Browser();
      const sent = await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      assert.equal(sent.status, 200);
      const mail = (await outbox.read()).at(-1)!;
      assert.equal(mail.subject, "Sign in to Vestibule");
      const confirm = await browser.get(mail.link);
      assert.match(confirm.text, /Sign in as <strong>owner@example.com<\/strong>/);
      const fields = {
        csrf: hiddenField(confirm.text, "csrf"),
        token: hiddenField(confirm.text, "token"),
      };
      const first = await browser.post(`${auth}/sign-in/verify`, fields);
      assert.equal(first.status, 303);
      const second = await browser.post(`${auth}/sign-in/verify`, fields);
      assert.equal(second.status, 410);
      assert.match(second.text, /expired or has already been used/);
      assert.equal((await browser.get(mail.link)).status, 410);
    });

    await t.step("two concurrent confirmations of one link: exactly one signs in", async () => {
      const browser = new Browser();
      await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      const mail = (await outbox.read()).at(-1)!;
      const confirm = await browser.get(mail.link);
      const fields = {
        csrf: hiddenField(confirm.text, "csrf"),
        token: hiddenField(confirm.text, "token"),
      };
      const results = await Promise.all(
        Array.from({ length: 8 }, () => browser.post(`${auth}/sign-in/verify`, fields)),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [
        303,
        410,
        410,
        410,
        410,
        410,
        410,
        410,
      ]);
    });

    await t.step("a link older than 15 minutes is refused", async () => {
      const browser = new Browser();
      await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      const mail = (await outbox.read()).at(-1)!;
      const confirm = await browser.get(mail.link);
      clock.advance(14 * 60_000);
      assert.equal((await browser.get(mail.link)).status, 200, "still valid at 14 minutes");
      clock.advance(60_000);
      assert.equal((await browser.get(mail.link)).status, 410);
      const late = await browser.post(`${auth}/sign-in/verify`, {
        csrf: hiddenField(confirm.text, "csrf"),
        token: hiddenField(confirm.text, "token"),
      });
      assert.equal(late.status, 410);
      assert.match(late.text, /expired or has already been used/);
    });

    await t.step("return_to is honoured for paths on this origin only", async () => {
      const cases = [
        {
          returnTo: "/api/auth/oauth2/authorize?client_id=x&state=1",
          expect: "/api/auth/oauth2/authorize?client_id=x&state=1",
        },
        { returnTo: "//evil.example/x", expect: "/account" },
        { returnTo: "/\\evil.example", expect: "/account" },
        { returnTo: "https://evil.example/", expect: "/account" },
        { returnTo: "account", expect: "/account" },
      ];
      for (const { returnTo, expect } of cases) {
        const browser = new Browser();
        const url = `${auth}/sign-in?return_to=${encodeURIComponent(returnTo)}`;
        const form = await browser.get(url);
        const sent = await browser.post(`${auth}/sign-in`, {
          csrf: hiddenField(form.text, "csrf"),
          return_to: hiddenField(form.text, "return_to"),
          email: "owner@example.com",
        });
        assert.equal(sent.status, 200);
        const done = await followLink(browser, (await outbox.read()).at(-1)!.link);
        assert.equal(done.response.headers.get("Location"), `${auth}${expect}`, returnTo);
      }
    });

    await t.step("sign-out needs its CSRF token, then ends the session", async () => {
      const browser = new Browser();
      await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      await followLink(browser, (await outbox.read()).at(-1)!.link);
      const stolen = new Map(browser.cookies);
      const account = await browser.get(`${auth}/account`);
      assert.equal(account.status, 200);
      assert.equal((await browser.post(`${auth}/sign-out`, {})).status, 403);
      assert.equal((await browser.post(`${auth}/sign-out`, { csrf: "forged" })).status, 403);
      assert.equal((await browser.get(`${auth}/account`)).status, 200, "still signed in");
      const out = await browser.post(`${auth}/sign-out`, {
        csrf: hiddenField(account.text, "csrf"),
      });
      assert.equal(out.status, 303);
      assert.match(
        out.response.headers.getSetCookie().join("\n"),
        /vestibule_session_\d+=; .*Max-Age=0/,
      );
      // It lands on the sign-in page, which says so.
      const landed = await browser.get(new URL(out.response.headers.get("Location")!, auth).href);
      assert.equal(landed.status, 200);
      assert.match(landed.text, /id="signed-out"[^>]*><p>You are signed out\./);
      assert.doesNotMatch(
        (await browser.get(`${auth}/sign-in`)).text,
        /signed out/,
        "only after signing out",
      );
      const replay = new Browser();
      for (const [k, v] of stolen) replay.cookies.set(k, v);
      const after = await replay.get(`${auth}/account`);
      assert.equal(after.status, 303, "the old cookie no longer works");
      assert.equal(
        after.response.headers.get("Location"),
        `${auth}/sign-in?return_to=%2Faccount`,
      );
    });

    await t.step("the store keeps links by SHA-256 only", async () => {
      await submitForm(new Browser(), `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      const token = new URL((await outbox.read()).at(-1)!.link).searchParams.get("token")!;
      const keys: string[] = [];
      const values: string[] = [];
      for await (const e of server.store.list(["accounts", "email_link"])) {
        keys.push(String(e.key.at(-1)));
        values.push(JSON.stringify(e.value));
      }
      assert.ok(keys.includes(await hashSecret(token)));
      assert.ok(!keys.includes(token) && !values.some((v) => v.includes(token)));
    });

    await t.step("no link token ever reaches the server log", async () => {
      const logs = server.logs.join("\n");
      for (const mail of await outbox.read()) {
        const token = new URL(mail.link).searchParams.get("token");
        if (token) assert.ok(!logs.includes(token), "token in logs");
      }
      assert.ok(!logs.includes("vestibule_session"), "cookie in logs");
    });
  } finally {
    await server.close();
  }
});
