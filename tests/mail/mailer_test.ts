import assert from "node:assert/strict";
import { createMailer } from "../../src/mail/mailer.ts";

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

Deno.test("the log mailer (development) writes the mail, link included, to its sink", async () => {
  const lines: string[] = [];
  await createMailer({ kind: "log" }, (line) => lines.push(line)).send({
    to: "dev@example.com",
    subject: "Sign in",
    text: "Open http://x/l",
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
});
