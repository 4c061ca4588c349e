import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/config.ts";
import { type SmtpConfig } from "../../src/config/mail_url.ts";
import { ConfigError } from "../../src/config/settings.ts";
import { smtpTransportOptions } from "../../src/mail/smtp.ts";
import { describeMailTransport, openMailTransport } from "../../src/mail/transport.ts";

const FROM = { VESTIBULE_MAIL_FROM: "Acme <no-reply@acme.example>" };

Deno.test("VESTIBULE_MAIL smtp:// and smtps:// URLs, with percent-encoded credentials", async (t) => {
  const cases = [
    {
      mail: "smtp://mail.example.com",
      want: { implicitTls: false, host: "mail.example.com", port: 587, user: null, password: null },
    },
    {
      mail: "smtps://apikey:s%40cr%3At@smtp.example.com",
      want: {
        implicitTls: true,
        host: "smtp.example.com",
        port: 465,
        user: "apikey",
        password: "s@cr:t",
      },
    },
    {
      mail: "smtp://me%40example.com:pw@127.0.0.1:2525",
      want: {
        implicitTls: false,
        host: "127.0.0.1",
        port: 2525,
        user: "me@example.com",
        password: "pw",
      },
    },
  ];
  for (const { mail, want } of cases) {
    await t.step(mail, () => {
      const config = resolveConfig({ VESTIBULE_MAIL: mail, ...FROM });
      assert.deepEqual(config.mail, {
        kind: "smtp",
        ...want,
        from: FROM.VESTIBULE_MAIL_FROM,
        passwordFile: null,
      });
    });
  }
});

Deno.test("a bad SMTP setting is one line, and never shows the password", async (t) => {
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      "no sender",
      { VESTIBULE_MAIL: "smtp://u:hunter2@mail.example.com" },
      /^VESTIBULE_MAIL_FROM is required with SMTP mail$/,
    ],
    [
      "bad sender",
      { VESTIBULE_MAIL: "smtp://mail.example.com", VESTIBULE_MAIL_FROM: "Acme" },
      /^VESTIBULE_MAIL_FROM="Acme": must be an address, optionally with a display name/,
    ],
    [
      "two senders",
      {
        VESTIBULE_MAIL: "smtp://mail.example.com",
        VESTIBULE_MAIL_FROM: "a@x.example, b@x.example",
      },
      /^VESTIBULE_MAIL_FROM=.*must be an address/,
    ],
    [
      "path",
      { VESTIBULE_MAIL: "smtp://u:hunter2@mail.example.com/x", ...FROM },
      /^VESTIBULE_MAIL="smtp:\/\/u:\*\*\*@mail.example.com\/x": must not have a path, query or fragment$/,
    ],
    [
      "bad encoding",
      { VESTIBULE_MAIL: "smtp://u:hunter2%zz@mail.example.com", ...FROM },
      /^VESTIBULE_MAIL="smtp:\/\/u:\*\*\*@mail.example.com": user and password must be percent-encoded$/,
    ],
    [
      "a mistyped scheme",
      { VESTIBULE_MAIL: "smtpx://u:hunter2@mail.example.com", ...FROM },
      /^VESTIBULE_MAIL="smtpx:\/\/u:\*\*\*@mail.example.com": must be log, file:PATH, smtp:/,
    ],
    [
      "a password with an unencoded / and @",
      { VESTIBULE_MAIL: "smtp://u:hun/ter@2@mail.example.com", ...FROM },
      /^VESTIBULE_MAIL="smtp:\/\/u:\*\*\*@mail.example.com": /,
    ],
    [
      "password file without user",
      {
        VESTIBULE_MAIL: "smtp://mail.example.com",
        VESTIBULE_MAIL_PASSWORD_FILE: "/run/pw",
        ...FROM,
      },
      /^VESTIBULE_MAIL_PASSWORD_FILE needs a user in VESTIBULE_MAIL \(smtp:\/\/USER@HOST\)$/,
    ],
  ];
  for (const [name, env, message] of cases) {
    await t.step(name, () => {
      assert.throws(() => resolveConfig(env), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /hunter2|hun\/ter/);
        return true;
      });
    });
  }
});

Deno.test("the transport as logged masks the password, from the URL or from a file", () => {
  const fromUrl = resolveConfig({
    VESTIBULE_MAIL: "smtp://me%40x.example:hunter2@mail.example.com",
    ...FROM,
  });
  assert.equal(
    describeMailTransport(fromUrl.mail),
    "smtp://me%40x.example:***@mail.example.com:587",
  );
  const fromFile = resolveConfig({
    VESTIBULE_MAIL: "smtps://me@mail.example.com",
    VESTIBULE_MAIL_PASSWORD_FILE: "/run/secrets/smtp",
    ...FROM,
  });
  assert.equal(describeMailTransport(fromFile.mail), "smtps://me:***@mail.example.com:465");
  assert.equal(describeMailTransport(resolveConfig({}).mail), "log");
});

Deno.test("an unreadable VESTIBULE_MAIL_PASSWORD_FILE stops start-up with one line", async () => {
  const config = resolveConfig({
    VESTIBULE_MAIL: "smtp://me@mail.example.com",
    VESTIBULE_MAIL_PASSWORD_FILE: "/nonexistent/smtp-password",
    ...FROM,
  });
  await assert.rejects(
    openMailTransport(config.mail, { mailLog: () => {}, clientName: "localhost" }),
    { message: 'cannot read VESTIBULE_MAIL_PASSWORD_FILE="/nonexistent/smtp-password": NotFound' },
  );
});

Deno.test("smtp:// insists on STARTTLS except on loopback; smtps:// is TLS from the start", async (t) => {
  const options = (mail: string) =>
    smtpTransportOptions(
      resolveConfig({ VESTIBULE_MAIL: mail, ...FROM }).mail as SmtpConfig,
      { clientName: "auth.example.com", password: null },
    );
  const cases: [string, { secure: boolean; requireTLS: boolean }][] = [
    ["smtp://mail.example.com", { secure: false, requireTLS: true }],
    ["smtp://127.0.0.1:25", { secure: false, requireTLS: false }],
    ["smtp://[::1]:25", { secure: false, requireTLS: false }],
    ["smtp://localhost:25", { secure: false, requireTLS: false }],
    ["smtps://mail.example.com", { secure: true, requireTLS: false }],
  ];
  for (const [mail, want] of cases) {
    await t.step(mail, () => {
      const { secure, requireTLS, name } = options(mail);
      assert.deepEqual({ secure, requireTLS }, want);
      assert.equal(name, "auth.example.com");
    });
  }
  assert.equal(options("smtp://[::1]:25").host, "::1");
});
