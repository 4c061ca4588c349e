// An approved invitation mails the invitee through the outbox, and its record says what
// really happened to that mail.
import assert from "node:assert/strict";
import type { Mail } from "../../../src/mail/mailer.ts";
import { createMailService } from "../../../src/mail/mail_outbox.ts";
import { DeliveryError } from "../../../src/outbox/sender.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("an approved invitation mails the invitee; the record follows the mail", async (t) => {
  const cases: { name: string; send: (mail: Mail) => Promise<void>; delivery: string }[] = [
    { name: "the mail server takes it: sent", send: () => Promise.resolve(), delivery: "sent" },
    {
      name: "the mail server refuses it (550): failed",
      send: () => Promise.reject(new DeliveryError("550 5.1.1 no such user", true)),
      delivery: "failed",
    },
    {
      name: "the mail server is down: pending, retried later",
      send: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:25")),
      delivery: "pending",
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const f = await createFixture();
      try {
        const sent: Mail[] = [];
        const { mailer } = createMailService({
          store: f.workspace.store,
          now: f.now,
          transport: { send: (mail) => (sent.push(mail), c.send(mail)) },
          log: () => {},
        });
        const { gates } = createWorkspaceServices({
          store: f.workspace.store,
          now: f.now,
          accounts: f.accounts,
          mailer,
          authUrl: "http://auth.test",
        });
        const requested = await gates.request({
          businessId: f.businessId,
          accountId: f.memberId,
          clientId: "client-1",
          clientName: "Client One",
          tool: "invite_member",
          scope: "members.manage",
          action: {
            type: "change_access",
            change: "invite",
            email: "new@example.com",
            role: "member",
          },
        });
        assert.ok(requested.ok);
        const decided = await gates.decide(requested.gate.id, f.ownerId, "approve");
        assert.equal(decided.kind, "decided");

        const invitation = sent.find((m) => m.to === "new@example.com");
        assert.ok(invitation, "the invitee was mailed");
        assert.equal(invitation.subject, "You were added to Acme on Vestibule");
        assert.equal(invitation.link, "http://auth.test/sign-in");
        assert.ok(invitation.text.split("\n").includes(invitation.link), "link on its own line");
        assert.match(invitation.text, /as a member/);
        const [record] = await f.workspace.invitations.list(f.businessId);
        assert.equal(record?.delivery, c.delivery);
      } finally {
        f.close();
      }
    });
  }
});
