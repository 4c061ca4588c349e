// The mail server is down while a person asks for a sign-in link; Vestibule is restarted
// meanwhile; the mail server comes back; the mail arrives exactly once. Real processes, run
// with the start task's permissions, on one KV file.
import assert from "node:assert/strict";
import { Browser, submitForm } from "../support/accounts_browser.ts";
import { freePorts } from "../../../testkit/ports.ts";
import {
  copyProject,
  mainCommand,
  originsEnv,
  startServerProcess,
  taskFlags,
} from "../support/main_process.ts";
import { startSmtpServer } from "../support/smtp_server.ts";
import { storeFile } from "../support/server_runtime.ts";

async function askForSignIn(authUrl: string): Promise<string> {
  const browser = new Browser();
  const page = await submitForm(browser, `${authUrl}/sign-in`, `${authUrl}/sign-in`, {
    email: "someone@example.com",
  });
  assert.equal(page.status, 200, page.text);
  return page.text;
}

Deno.test("a sign-in mail asked for during an SMTP outage arrives once, after a restart", async () => {
  const dir = await copyProject();
  const [smtpPort] = freePorts(1) as [number];
  const origins = originsEnv();
  const authUrl = origins.VESTIBULE_AUTH_URL!;
  const env = {
    ...origins,
    VESTIBULE_DATA: storeFile("data/vestibule"),
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtpPort}`,
    VESTIBULE_MAIL_FROM: "no-reply@example.com",
  };
  try {
    // 1. The mail server is down: the person gets the usual page, the mail waits.
    const first = await startServerProcess(dir, env);
    let pageDuringOutage;
    try {
      pageDuringOutage = await askForSignIn(authUrl);
      const warning = JSON.parse(await first.waitForLine(/delivery failed, will retry/));
      assert.match(warning.error, /ECONNREFUSED|connect/i);
    } finally {
      const firstRun = await first.stop();
      assert.equal(firstRun.code, 0, firstRun.stderr);
    }

    // 2. The mail server comes back; a restarted Vestibule sends what was waiting.
    const smtp = await startSmtpServer({ port: smtpPort });
    const second = await startServerProcess(dir, env);
    try {
      const [mail] = await smtp.waitFor(1);
      assert.deepEqual(mail!.envelopeTo, ["someone@example.com"]);
      assert.equal(mail!.headers.get("Subject"), "Sign in to Vestibule");
      // With the server up, the page is the same as during the outage.
      assert.equal(await askForSignIn(authUrl), pageDuringOutage);
      await smtp.waitFor(2);
    } finally {
      const secondRun = await second.stop();
      assert.equal(secondRun.code, 0, secondRun.stderr);
      await smtp.close();
    }

    // 3. Exactly once: both are marked sent, nothing waits to go out again.
    assert.equal(smtp.received.length, 2);
    const { code, stdout, stderr } = await mainCommand(
      await taskFlags("admin", "src/operator/cli/cli.ts"),
      { VESTIBULE_DATA: env.VESTIBULE_DATA },
      { cwd: dir, entry: "src/operator/cli/cli.ts", args: ["list-outbox"] },
    ).output();
    const out = new TextDecoder().decode(stdout);
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    assert.deepEqual(JSON.parse(out), { deliveries: [] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
