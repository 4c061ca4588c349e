// An owner invites someone from the form on /account, over HTTP on the real server: the
// invitation mail is the one `admin add-member` sends, the invitee signs in as a member, the
// audit log names who invited whom; a forged form, a member, a bad address or someone already in
// the business is refused with the reason, and nobody is mailed.
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { hiddenField, signInThroughForms } from "../support/accounts_browser.ts";
import { ownerFixture } from "../support/owner_fixture.ts";

Deno.test("an owner invites a member from /account; the invitation is mailed and audited", async (t) => {
  const { server, auth, outbox, accounts, owner, business } = await ownerFixture(
    "owner@example.com",
    "Invite Ltd",
  );
  try {
    const form = async () => {
      const page = await owner.get(`${auth}/account`);
      assert.equal(page.status, 200);
      const start = page.text.indexOf('<form method="post" action="/account/members"');
      assert.ok(start >= 0, "no invitation form on /account");
      return page.text.slice(start, page.text.indexOf("</form>", start));
    };
    const mailsTo = async (email: string) => (await outbox.read()).filter((m) => m.to === email);

    await t.step("the form asks for an e-mail address and a role", async () => {
      const text = await form();
      assert.match(text, /name="email" type="email"/);
      assert.match(text, /<select [^>]*name="role"/);
      assert.equal(hiddenField(text, "business"), business.id);
    });

    await t.step("inviting adds the member and mails them the invitation", async () => {
      const sent = await owner.post(`${auth}/account/members`, {
        csrf: hiddenField(await form(), "csrf"),
        business: business.id,
        email: "new@example.com",
        role: "member",
      });
      assert.equal(sent.status, 200, sent.text);
      assert.match(sent.text, /id="invited"/);
      assert.match(sent.text, /new@example\.com<\/strong> is now a member of Invite Ltd/);
      const [mail, ...more] = await mailsTo("new@example.com");
      assert.equal(more.length, 0);
      assert.equal(mail!.subject, "You were added to Invite Ltd on Vestibule");
      assert.match(mail!.text, /owner@example\.com, an owner of "Invite Ltd" added/);
      const invited = await signInThroughForms(auth, outbox, "new@example.com");
      const account = await invited.get(`${auth}/account`);
      assert.match(account.text, /Invite Ltd/);
      assert.match(account.text, /<dt>Your role<\/dt>\s*<dd>Member<\/dd>/);
      const [entry] = await createAuditLog(server.store, Date.now).list(business.id, { limit: 1 });
      assert.equal(entry!.action, "invite_member");
      assert.equal(entry!.actor, "human");
      assert.match(entry!.summary, /invited new@example\.com as a member/);
    });

    await t.step("refusals say why, and mail no one", async () => {
      const csrf = hiddenField(await form(), "csrf");
      const post = (fields: Record<string, string>) =>
        owner.post(`${auth}/account/members`, {
          csrf,
          business: business.id,
          role: "member",
          ...fields,
        });
      const forged = await post({ csrf: "forged", email: "forged@example.com" });
      assert.equal(forged.status, 403);
      const bad = await post({ email: "not an address" });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /id="form-error"/);
      const again = await post({ email: "new@example.com" });
      assert.equal(again.status, 409);
      assert.match(again.text, /already/i);
      const role = await post({ email: "role@example.com", role: "admin" });
      assert.equal(role.status, 400);
      assert.match(role.text, /role must be owner or member/);
      const elsewhere = await accounts.createAccountWithBusiness("else@example.com", "Else");
      const notOurs = await post({ business: elsewhere.business.id, email: "friend@example.com" });
      assert.equal(notOurs.status, 404);
      assert.match(notOurs.text, /Business not found/);
      const member = await signInThroughForms(auth, outbox, "new@example.com");
      const notOwner = await member.post(`${auth}/account/members`, {
        csrf: "x",
        business: business.id,
        email: "friend@example.com",
      });
      assert.ok(notOwner.status === 403 || notOwner.status === 404, String(notOwner.status));
      for (const email of ["forged@example.com", "role@example.com", "friend@example.com"]) {
        assert.deepEqual(await mailsTo(email), []);
        assert.equal(await accounts.findAccountByEmail(email), null);
      }
      assert.equal(
        (await mailsTo("new@example.com")).filter((m) => /added/.test(m.subject)).length,
        1,
      );
    });
  } finally {
    await server.close();
  }
});
