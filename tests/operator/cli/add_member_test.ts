// `admin add-member` tells the new member, once, through the outbox and the real mail server.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { runAdminCommand } from "../../../src/operator/cli/commands.ts";
import { openKvStore } from "../../../src/store/kv_store.ts";
import { createWorkspace } from "../../../src/workspace/domain/workspace.ts";
import { startSmtpServer } from "../../blackbox/support/smtp_server.ts";

Deno.test("add-member mails the new member one invitation, and nobody when they were a member already", async (t) => {
  const smtp = await startSmtpServer();
  const store = await openKvStore(":memory:");
  const config = resolveConfig({
    VESTIBULE_AUTH_URL: "http://127.0.0.1:8001",
    VESTIBULE_MAIL: `smtp://127.0.0.1:${smtp.port}`,
    VESTIBULE_MAIL_FROM: "Vestibule <no-reply@example.com>",
  });
  const { business } = await createAccounts(store, Date.now).createAccountWithBusiness(
    "owner@example.com",
    "Demo Outfitters",
  );
  const addMember = async (email: string, role = "member") => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdminCommand(
      ["add-member", "--business", business.id, "--email", email, "--role", role],
      { config, store, now: Date.now, out: (s) => out.push(s), err: (s) => err.push(s) },
    );
    assert.equal(code, 0, err.join("\n"));
    return JSON.parse(out.join("\n"));
  };
  try {
    await t.step(
      "a new member gets one mail: who added them, to which business, where to sign in",
      async () => {
        const result = await addMember("helper@example.com");
        assert.equal(result.invitation, "mailed to helper@example.com");
        const [mail] = await smtp.waitFor(1);
        assert.equal(smtp.received.length, 1);
        assert.deepEqual(mail!.envelopeTo, ["helper@example.com"]);
        assert.equal(
          mail!.headers.get("Subject"),
          "You were added to Demo Outfitters on Vestibule",
        );
        assert.deepEqual(mail!.parts, ["text/plain", "text/html"]);
        const lines = mail!.text.split("\n");
        assert.equal(lines[0], 'You were added to "Demo Outfitters" as a member');
        assert.match(mail!.text, /The operator of Vestibule added helper@example\.com/);
        assert.ok(
          lines.includes("http://127.0.0.1:8001/sign-in"),
          "the sign-in page, on its own line",
        );
        assert.ok(mail!.html!.includes('href="http://127.0.0.1:8001/sign-in"'));
        assert.match(mail!.text, /because the operator of Vestibule added this address/);
        // The record list_members shows follows the mail.
        const [invitation] = await createWorkspace(store).invitations.list(business.id);
        assert.equal(invitation?.email, "helper@example.com");
        assert.equal(invitation?.delivery, "sent");
      },
    );

    await t.step("someone already a member (a role change) gets no invitation", async () => {
      const result = await addMember("helper@example.com", "owner");
      assert.equal(result.role, "owner");
      assert.equal(result.invitation, "none: already a member, only the role was set");
      await addMember("owner@example.com", "owner");
      assert.equal(smtp.received.length, 1, "still the one mail");
      assert.equal((await createWorkspace(store).invitations.list(business.id)).length, 1);
    });
  } finally {
    store.close();
    await smtp.close();
  }
});
