import assert from "node:assert/strict";
import { createMailer } from "../../src/mail/mailer.ts";
import { composeMail } from "../../src/mail/compose.ts";

Deno.test("the file mailer appends one JSON object a line, owner-only, even when sends overlap", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/mail/outbox.jsonl`;
  try {
    const mailer = createMailer({ kind: "file", path }, () => assert.fail("no log for file mail"));
    await Promise.all(Array.from({ length: 20 }, (_, i) =>
      mailer.send({
        to: `u${i}@example.com`,
        subject: "Subject",
        text: `line one\nline "two" ${i}`,
        link: `http://127.0.0.1/l/${i}`,
      })));
    const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
    assert.equal(lines.length, 20);
    const mails = lines.map((l) => JSON.parse(l));
    assert.deepEqual(Object.keys(mails[0]), ["to", "subject", "text", "link"]);
    assert.deepEqual(new Set(mails.map((m) => m.to)).size, 20);
    if (Deno.build.os !== "windows") {
      // The links in it sign in: whatever the umask, only the owner may read it.
      assert.equal((await Deno.stat(`${dir}/mail`)).mode! & 0o777, 0o700);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the log mailer prints each mail for a person: recipient, subject, the link on its own line, the text", async () => {
  const printed: string[] = [];
  const mail = composeMail({
    to: "dev@example.com",
    subject: "Sign in to Vestibule",
    heading: "Your sign-in link",
    paragraphs: ["Open it within 15 minutes."],
    action: { label: "Sign in", url: "http://127.0.0.1:8001/sign-in/verify?token=abc" },
    reason: "You get this because you asked.",
    origin: "http://127.0.0.1:8001",
  });
  await createMailer({ kind: "log" }, () => {}, (text) => printed.push(text)).send(mail);
  assert.equal(printed.length, 1, "one print per mail");
  const lines = printed[0]!.split("\n");
  assert.ok(lines.includes("Mail to dev@example.com"), printed[0]);
  assert.ok(lines.includes("Subject: Sign in to Vestibule"));
  const at = lines.indexOf("Link:");
  assert.equal(lines[at + 1], mail.link, "the link alone on the line after 'Link:'");
  assert.ok(printed[0]!.includes(mail.text.trimEnd()), "then the text");
  assert.doesNotMatch(printed[0]!, /<html|^\{/m, "no HTML, no JSON");
});

Deno.test("the file mailer keeps the HTML beside the text when a mail has it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mailer = createMailer({ kind: "file", path: `${dir}/outbox.jsonl` }, () => {});
    await mailer.send({
      to: "a@example.com",
      subject: "S",
      text: "T\n",
      html: "<p>T</p>",
      link: "http://x/",
    });
    const [line] = (await Deno.readTextFile(`${dir}/outbox.jsonl`)).split("\n");
    assert.deepEqual(Object.keys(JSON.parse(line!)), ["to", "subject", "text", "link", "html"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the log mailer (development) writes the mail, link included, to its sink", async () => {
  const lines: string[] = [];
  await createMailer({ kind: "log" }, (line) => lines.push(line)).send({
    to: "dev@example.com",
    subject: "Sign in",
    text: "Open http://x/l",
    html: "<p>not in the log line</p>",
    link: "http://x/l",
  });
  assert.equal(lines.length, 1);
  const logged = JSON.parse(lines[0]!);
  assert.equal(logged.to, "dev@example.com");
  assert.equal(logged.link, "http://x/l");
  // A log line like any other: time first, then level.
  assert.deepEqual(Object.keys(logged).slice(0, 3), ["time", "level", "message"]);
  assert.ok(!Number.isNaN(Date.parse(logged.time)));
  assert.equal(logged.level, "info");
  assert.equal(logged.html, undefined, "the text is enough in a log line");
});
