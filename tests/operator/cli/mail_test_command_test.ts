import assert from "node:assert/strict";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { freePorts } from "../../../testkit/ports.ts";
import { startSmtpServer } from "../../blackbox/support/smtp_server.ts";

async function mailTest(env: Record<string, string>, to: string) {
  const store = await openKvStore(":memory:");
  const out: string[] = [];
  const err: string[] = [];
  try {
    const code = await runAdminCommand(["mail-test", "--to", to], {
      config: resolveConfig({ VESTIBULE_MAIL_FROM: "Ops <ops@example.com>", ...env }),
      store,
      now: Date.now,
      out: (s) => out.push(s),
      err: (s) => err.push(s),
    });
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    store.close();
  }
}

Deno.test("mail-test sends one message over SMTP and reports the server's reply", async () => {
  const smtp = await startSmtpServer({ auth: { user: "ops", pass: "hunter2" } });
  try {
    const result = await mailTest(
      { VESTIBULE_MAIL: `smtp://ops:hunter2@127.0.0.1:${smtp.port}` },
      "me@example.com",
    );
    assert.equal(result.code, 0, result.err);
    const report = JSON.parse(result.out);
    assert.equal(report.sent, true);
    assert.equal(report.transport, `smtp://ops:***@127.0.0.1:${smtp.port}`);
    assert.match(report.reply, /^250 /);
    assert.doesNotMatch(result.out + result.err, /hunter2/);
    assert.equal(smtp.received.length, 1);
    assert.equal(
      smtp.received[0]!.headers.get("Subject"),
      "Test message from Vestibule at localhost:8001",
    );
    assert.deepEqual(smtp.received[0]!.envelopeTo, ["me@example.com"]);
  } finally {
    await smtp.close();
  }
});

Deno.test("mail-test says in one line why nothing was sent", async (t) => {
  await t.step("the server is down", async () => {
    const [port] = freePorts(1);
    const result = await mailTest(
      { VESTIBULE_MAIL: `smtp://ops:hunter2@127.0.0.1:${port}` },
      "me@example.com",
    );
    assert.equal(result.code, 1);
    assert.match(
      result.err,
      new RegExp(
        `^vestibule admin mail-test: not sent via smtp://ops:\\*\\*\\*@127\\.0\\.0\\.1:${port}: failed, would be retried: .*ECONNREFUSED.*$`,
      ),
    );
    assert.equal(result.err.split("\n").length, 1);
    assert.doesNotMatch(result.err, /hunter2/);
  });

  await t.step("the server refuses the recipient", async () => {
    const smtp = await startSmtpServer({ rejectRecipients: ["gone@example.com"] });
    try {
      const result = await mailTest(
        { VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}` },
        "gone@example.com",
      );
      assert.equal(result.code, 1);
      assert.match(result.err, /: refused, permanently: .*550/);
    } finally {
      await smtp.close();
    }
  });
});
