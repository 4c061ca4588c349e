import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import assert from "node:assert/strict";
import { getGrant } from "../../../src/oauth/grants.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import {
  Browser,
  followLink,
  hiddenField,
  signUpThroughForms,
  submitForm,
  tempOutbox,
} from "../support/accounts_browser.ts";
import { manualClock } from "../../store/store_contract.ts";
import { startTestServer } from "../support/harness.ts";
import { ownerFixture } from "../support/owner_fixture.ts";

Deno.test("account forms refuse a missing or wrong CSRF token", async (t) => {
  const outbox = await tempOutbox();
  const server = await startTestServer({ VESTIBULE_MAIL: outbox.env });
  const auth = server.authUrl;
  try {
    const cases = [
      { path: "/sign-up", fields: { email: "a@example.com", business: "A" } },
      { path: "/sign-in", fields: { email: "a@example.com" } },
    ];
    for (const { path, fields } of cases) {
      await t.step(
        `${path} without a token, with a forged one, or without the cookie`,
        async () => {
          const browser = new Browser();
          const form = await browser.get(`${auth}${path}`);
          const token = hiddenField(form.text, "csrf");
          assert.equal((await browser.post(`${auth}${path}`, fields)).status, 403);
          const forged = await browser.post(`${auth}${path}`, { ...fields, csrf: "x".repeat(43) });
          assert.equal(forged.status, 403);
          assert.match(forged.text, /did not come from this site/);
          const cookieless = new Browser();
          assert.equal(
            (await cookieless.post(`${auth}${path}`, { ...fields, csrf: token })).status,
            403,
          );
          const otherForm = path === "/sign-up" ? "/sign-in" : "/sign-up";
          const wrongPurpose = hiddenField((await browser.get(`${auth}${otherForm}`)).text, "csrf");
          const crossed = await browser.post(`${auth}${path}`, { ...fields, csrf: wrongPurpose });
          assert.equal(crossed.status, 403, "a token of another form is refused");
          assert.equal((await outbox.read()).length, 0, "nothing was sent");
        },
      );
    }

    await t.step("link confirmation without the right token does not use the link", async () => {
      const browser = new Browser();
      await submitForm(browser, `${auth}/sign-up`, `${auth}/sign-up`, {
        email: "csrf@example.com",
        business: "Csrf Ltd",
      });
      const link = (await outbox.read()).at(-1)!.link;
      const confirm = await browser.get(link);
      const token = hiddenField(confirm.text, "token");
      assert.equal((await browser.post(`${auth}/sign-in/verify`, { token })).status, 403);
      const attacker = new Browser();
      const attackerPage = await attacker.get(`${auth}/sign-in`);
      const foreign = await browser.post(`${auth}/sign-in/verify`, {
        token,
        csrf: hiddenField(attackerPage.text, "csrf"),
      });
      assert.equal(foreign.status, 403, "a token from another browser is refused");
      assert.equal((await followLink(browser, link)).status, 303, "the link still works");
    });

    await t.step("/account revocation needs the session's token", async () => {
      const browser = new Browser();
      await signUpThroughForms(browser, auth, outbox, "revoker@example.com", "Revoker Ltd");
      const other = new Browser();
      await signUpThroughForms(other, auth, outbox, "other@example.com", "Other Ltd");
      const otherToken = hiddenField((await other.get(`${auth}/account`)).text, "csrf");
      assert.equal((await browser.post(`${auth}/account`, { grant: "g" })).status, 403);
      assert.equal(
        (await browser.post(`${auth}/account`, { grant: "g", csrf: otherToken })).status,
        403,
        "another session's token is refused",
      );
    });
  } finally {
    await server.close();
  }
});

Deno.test("sign-in and sign-up reveal nothing about existing accounts", async (t) => {
  const outbox = await tempOutbox();
  const server = await startTestServer({ VESTIBULE_MAIL: outbox.env });
  const auth = server.authUrl;
  try {
    await signUpThroughForms(new Browser(), auth, outbox, "known@example.com", "Known Ltd");
    const ask = async (path: string, fields: Record<string, string>) => {
      const browser = new Browser();
      const page = await submitForm(browser, `${auth}${path}`, `${auth}${path}`, fields);
      return {
        status: page.status,
        headers: [...page.response.headers].filter(([k]) =>
          !["date", "set-cookie", "content-length", "x-request-id"].includes(k)
        ),
        body: page.text.replaceAll(fields.email!, "EMAIL"),
      };
    };

    await t.step("sign-in: the same page for a known and an unknown address", async () => {
      const known = await ask("/sign-in", { email: "known@example.com" });
      const unknown = await ask("/sign-in", { email: "nobody@example.com" });
      assert.equal(known.status, 200);
      assert.deepEqual(unknown, known);
      const [toUnknown] = (await outbox.read()).filter((m) => m.to === "nobody@example.com");
      assert.equal(toUnknown?.subject, "Sign in to Vestibule", "same subject as a real link");
      assert.equal(toUnknown?.link, `${auth}/sign-up`, "no sign-in token for a non-account");
    });

    await t.step("sign-up: the same page for a known and a new address", async () => {
      const known = await ask("/sign-up", { email: "known@example.com", business: "B" });
      const fresh = await ask("/sign-up", { email: "new@example.com", business: "B" });
      assert.equal(known.status, 200);
      assert.deepEqual(fresh, known);
    });
  } finally {
    await server.close();
  }
});

Deno.test("sign-in and sign-up mail is rate limited per e-mail and per client address", async (t) => {
  const outbox = await tempOutbox();
  // A clock that stands still: no bucket refills while the test runs, however slowly.
  const clock = manualClock(Date.now());
  const server = await startTestServer({ VESTIBULE_MAIL: outbox.env }, { now: clock.now });
  const auth = server.authUrl;
  const send = (path: string, email: string) =>
    submitForm(new Browser(), `${auth}${path}`, `${auth}${path}`, {
      email,
      ...(path === "/sign-up" ? { business: "Limited" } : {}),
    });
  try {
    await t.step("the sixth mail to one address in 15 minutes is refused with 429", async () => {
      for (let i = 0; i < 3; i++) {
        assert.equal((await send("/sign-in", "busy@example.com")).status, 200);
      }
      for (let i = 0; i < 2; i++) {
        assert.equal((await send("/sign-up", "busy@example.com")).status, 200);
      }
      const refused = await send("/sign-in", "BUSY@example.com");
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.response.headers.get("Retry-After")) > 0);
      assert.match(refused.text, /Too many requests/);
      assert.equal((await send("/sign-up", "busy@example.com")).status, 429);
      assert.equal((await outbox.read()).length, 5);
      assert.equal((await send("/sign-in", "calm@example.com")).status, 200, "others unaffected");
    });

    await t.step("one client address gets 30 mails per 15 minutes", async () => {
      // 8 were taken above (refused ones count too); the address allows 30 in all.
      for (let i = 0; i < 22; i++) {
        assert.equal((await send("/sign-in", `user${i}@example.com`)).status, 200, `mail ${i}`);
      }
      assert.equal((await send("/sign-in", "one-more@example.com")).status, 429);
    });

    await t.step("the buckets refill: after 15 minutes mail flows again", async () => {
      // 5 per 15 minutes per e-mail: exactly five more, then refused again.
      clock.advance(15 * 60_000);
      for (let i = 0; i < 5; i++) {
        assert.equal((await send("/sign-in", "busy@example.com")).status, 200, `mail ${i}`);
      }
      assert.equal((await send("/sign-in", "busy@example.com")).status, 429);
    });

    await t.step("the bucket refills at one mail per 3 minutes", async () => {
      // Emptied by the step above, at this very moment: the next mail is 3 minutes away.
      const empty = await send("/sign-in", "busy@example.com");
      assert.equal(empty.status, 429);
      assert.equal(empty.response.headers.get("Retry-After"), "180");
      assert.match(empty.text, /Try again in 3 minutes/);
      clock.advance(3 * 60_000 - 1_000);
      const early = await send("/sign-in", "busy@example.com");
      assert.equal(early.status, 429, "a second short of 3 minutes");
      assert.equal(early.response.headers.get("Retry-After"), "1");
      assert.match(early.text, /Try again in 1 minute\./, "one minute, not 1 minutes");
      clock.advance(1_000);
      assert.equal((await send("/sign-in", "busy@example.com")).status, 200);
      assert.equal((await send("/sign-in", "busy@example.com")).status, 429);
    });
  } finally {
    await server.close();
  }
});

Deno.test("account forms answer bad bodies with precise errors, never a 500", async (t) => {
  const server = await startTestServer({ VESTIBULE_RATE_LIMITS: "off" });
  const auth = server.authUrl;
  try {
    const browser = new Browser();
    const csrf = hiddenField((await browser.get(`${auth}/sign-up`)).text, "csrf");
    const post = (body: string, type = "application/x-www-form-urlencoded") =>
      fetch(`${auth}/sign-up`, {
        method: "POST",
        headers: {
          "Content-Type": type,
          Cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        },
        body,
      });
    const cases = [
      { name: "JSON instead of a form", body: "{}", type: "application/json", status: 415 },
      { name: "a body over 8 KiB", body: `csrf=${csrf}&email=${"a".repeat(9000)}`, status: 413 },
      {
        name: "a repeated field",
        body: `csrf=${csrf}&email=a@x.io&email=b@x.io&business=B`,
        status: 400,
        says: /field &quot;email&quot; is repeated/,
      },
      {
        name: "an invalid e-mail",
        body: `csrf=${csrf}&email=not-an-address&business=B`,
        status: 400,
        says: /email must be an e-mail address/,
      },
      {
        name: "a missing business",
        body: `csrf=${csrf}&email=a@example.com`,
        status: 400,
        says: /business name is required/,
      },
      {
        name: "a 101-character business",
        body: `csrf=${csrf}&email=a@example.com&business=${"b".repeat(101)}`,
        status: 400,
        says: /at most 100 characters/,
      },
      { name: "invalid UTF-8", body: `csrf=${csrf}&email=%FF`, status: 400 },
    ];
    for (const c of cases) {
      await t.step(c.name, async () => {
        const response = await post(c.body, c.type);
        const text = await response.text();
        assert.equal(response.status, c.status, text);
        if (c.says) assert.match(text, c.says);
      });
    }
    await t.step("a link token of the wrong shape is a dead link", async () => {
      const page = await browser.get(`${auth}/sign-in/verify?token=%3Cscript%3E`);
      assert.equal(page.status, 410);
      assert.doesNotMatch(page.text, /<script>/);
    });
  } finally {
    await server.close();
  }
});

Deno.test("/account lists authorized clients per business and revokes them", async (t) => {
  const { server, auth, accounts, owner: browser, account, business } = await ownerFixture(
    "grants@example.com",
    "Grants Ltd",
  );
  try {
    const mine = await issueGrant({ config: server.config, store: server.store, now: Date.now }, {
      accountId: account.id,
      businessId: business.id,
      clientId: "client-one",
      clientName: "Claude <Desktop>",
      scopes: ["app.access", "billing.read"],
    });
    const stranger = await accounts.createAccountWithBusiness("stranger@example.com", "Else");
    const theirs = await issueGrant({ config: server.config, store: server.store, now: Date.now }, {
      accountId: stranger.account.id,
      businessId: stranger.business.id,
      clientId: "client-two",
      scopes: ["app.access"],
    });

    await t.step("no account page can be framed", async () => {
      for (const path of ["/account", "/sign-in", "/sign-up"]) {
        const page = await browser.get(`${auth}${path}`);
        assert.equal(page.status, 200, path);
        assert.match(
          page.response.headers.get("Content-Security-Policy") ?? "",
          /frame-ancestors 'none'/,
          path,
        );
      }
    });

    await t.step("the page names the client, escaped, with its scopes", async () => {
      const page = await browser.get(`${auth}/account`);
      assert.match(page.text, /Claude &lt;Desktop&gt;/);
      assert.match(page.text, /app\.access billing\.read/);
      assert.match(page.text, /aria-label="Revoke Claude &lt;Desktop&gt;"/);
      assert.doesNotMatch(page.text, /client-two/);
    });

    await t.step("each business carries the workspace's section (connection tests)", async () => {
      const page = await browser.get(`${auth}/account`);
      assert.match(page.text, /connection test not run/);
    });

    await t.step("another account's grant cannot be revoked from here", async () => {
      const page = await browser.get(`${auth}/account`);
      const revokeCsrf = page.text.match(
        /name="csrf" value="([^"]+)">\s*<input type="hidden" name="grant"/,
      )![1]!;
      const forged = await browser.post(`${auth}/account`, {
        csrf: revokeCsrf,
        grant: theirs.grantId,
      });
      assert.equal(forged.status, 404);
      assert.ok(await getGrant(server.store, theirs.grantId), "their grant is intact");
      assert.deepEqual(await createAuditLog(server.store, Date.now).list(stranger.business.id), []);
    });

    await t.step("revoking one's own grant ends it", async () => {
      const page = await browser.get(`${auth}/account`);
      const revokeCsrf = page.text.match(
        /name="csrf" value="([^"]+)">\s*<input type="hidden" name="grant"/,
      )![1]!;
      const done = await browser.post(`${auth}/account`, { csrf: revokeCsrf, grant: mine.grantId });
      assert.equal(done.status, 200);
      assert.match(done.text, /<div class="notice success" role="status" id="revoked">/);
      assert.match(
        done.text.replace(/\s+/g, " "),
        /Access revoked.<\/strong> Claude &lt;Desktop&gt; can no longer act for you in Grants Ltd: .* would have to ask you to sign in and consent again/,
      );
      assert.equal(await getGrant(server.store, mine.grantId), null);
      assert.match(done.text, /No agent acts for you in this business/);
      // The revocation is in the business's audit log, by the person, naming the client.
      const [entry, ...rest] = await createAuditLog(server.store, Date.now).list(business.id);
      assert.equal(rest.length, 0);
      assert.deepEqual(
        [entry?.actor, entry?.accountId, entry?.clientId, entry?.action],
        ["human", account.id, "client-one", "revoke_grant"],
      );
      const audit = await browser.get(`${auth}/account/audit?business=${business.id}`);
      assert.match(audit.text, /data-label="What">revoked the access of Claude &lt;Desktop&gt;/);
    });
  } finally {
    await server.close();
  }
});
