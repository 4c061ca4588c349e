import assert from "node:assert/strict";
import { Browser, followLink, submitForm } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { startSmtpServer } from "../support/smtp_server.ts";

const FROM = "Vestibule <no-reply@example.com>";

Deno.test("sign-up and sign-in by mail through a real SMTP server with STARTTLS and AUTH", async (t) => {
  const smtp = await startSmtpServer({
    starttls: true,
    auth: { user: "vestibule@example.com", pass: "p@ss:w/rd" },
  });
  const server = await startTestServer({
    VESTIBULE_MAIL: `smtp://vestibule%40example.com:p%40ss%3Aw%2Frd@127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: FROM,
    VESTIBULE_RATE_LIMITS: "off",
  }, { mailCa: [smtp.ca!] });
  const auth = server.authUrl;
  try {
    await t.step("the sign-up mail arrives, authenticated, and its link signs up", async () => {
      const browser = new Browser();
      const sent = await submitForm(browser, `${auth}/sign-up`, `${auth}/sign-up`, {
        email: "owner@example.com",
        business: "Acme",
      });
      assert.equal(sent.status, 200);
      const [mail] = await smtp.waitFor(1);
      assert.equal(mail!.user, "vestibule@example.com");
      assert.deepEqual(mail!.envelopeTo, ["owner@example.com"]);
      assert.equal(mail!.headers.get("From"), FROM);
      assert.equal(mail!.headers.get("Subject"), "Confirm your sign-up for Acme on Vestibule");
      assert.equal(mail!.headers.get("Auto-Submitted"), "auto-generated");
      assert.match(mail!.headers.get("Message-ID")!, /^<[0-9a-z]+-[0-9a-f-]{36}@example\.com>$/);
      assert.ok(!Number.isNaN(Date.parse(mail!.headers.get("Date")!)));
      // Text and HTML alternatives of one mail, the text first (RFC 2046 §5.1.4: the plainest).
      assert.match(mail!.headers.get("Content-Type")!, /^multipart\/alternative;/);
      assert.deepEqual(mail!.parts, ["text/plain", "text/html"]);
      const lines = mail!.text.split("\n");
      assert.equal(lines[0], 'Confirm to create "Acme" on Vestibule', "the first line says what");
      const link = lines.find((line) => line.startsWith(`${auth}/sign-in/verify?token=`));
      assert.ok(link, "the link is on a line of its own");
      assert.match(mail!.text, /within 15 minutes/);
      // The footer: why this address gets it, and which Vestibule sent it.
      assert.ok(
        mail!.text.includes(
          `-- \nYou get this because someone asked to sign up on Vestibule with this address at ` +
            `${auth}. If it wasn't you, ignore this mail.\nSent by Vestibule at ${auth}.\n`,
        ),
        mail!.text,
      );
      const html = mail!.html!;
      assert.match(html, /^<!doctype html>\s*<html lang="en">/);
      assert.ok(html.includes(`<a href="${link.replaceAll("&", "&amp;")}"`), "the button");
      assert.ok(html.includes("Confirm to create &quot;Acme&quot; on Vestibule</h1>"));
      assert.ok(html.includes("You get this because someone asked to sign up on Vestibule"));
      // Inline styles only (mail clients drop stylesheets) and nothing to load.
      assert.doesNotMatch(html, /<style|<link|<img|<script/i);
      const done = await followLink(browser, link);
      assert.equal(done.status, 303);
      assert.equal(done.response.headers.get("Location"), `${auth}/account?welcome`);
    });

    await t.step("the sign-in mail arrives and its link signs in", async () => {
      const browser = new Browser();
      const sent = await submitForm(browser, `${auth}/sign-in`, `${auth}/sign-in`, {
        email: "owner@example.com",
      });
      assert.equal(sent.status, 200);
      const mail = (await smtp.waitFor(2))[1]!;
      assert.equal(mail.headers.get("Subject"), "Sign in to Vestibule");
      const link = mail.text.split("\n").find((l) => l.startsWith(`${auth}/sign-in/verify?`))!;
      assert.equal((await followLink(browser, link)).status, 303);
      assert.equal((await browser.get(`${auth}/account`)).status, 200);
    });

    await t.step("the password appears in no log line", () => {
      assert.doesNotMatch(server.logs.join("\n"), /p@ss|p%40ss/);
    });
  } finally {
    await server.close();
    await smtp.close();
  }
});

Deno.test("a recipient the SMTP server refuses with 550: no retry, one warning line", async () => {
  const smtp = await startSmtpServer({ rejectRecipients: ["gone@example.com"] });
  const server = await startTestServer({
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: FROM,
  });
  try {
    const browser = new Browser();
    const sent = await submitForm(
      browser,
      `${server.authUrl}/sign-in`,
      `${server.authUrl}/sign-in`,
      {
        email: "gone@example.com",
      },
    );
    assert.equal(sent.status, 200, "the usual page");
    const warnings = server.logs.map((l) => JSON.parse(l))
      .filter((l) => l.level === "warn" && !l.message.startsWith("no event receiver"));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].message, "delivery failed, not retried");
    assert.match(warnings[0].error, /550/);
    assert.equal(smtp.received.length, 0);
  } finally {
    await server.close();
    await smtp.close();
  }
});
