// /account as the owner's console, over HTTP on the real server: agents by name (ids on demand),
// the members for an owner, the empty states in words, the business's audit log linked for
// owners and a member's own for members.
import assert from "node:assert/strict";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { signInThroughForms } from "../support/accounts_browser.ts";
import { ownerFixture } from "../support/owner_fixture.ts";

Deno.test("/account is a console of each business: agents by name, members, approvals, audit link", async (t) => {
  const { server, auth, outbox, accounts, owner, account: ownerAccount, business } =
    await ownerFixture("owner@example.com", "Console Ltd");
  try {
    const member = await accounts.addMember(business.id, "member@example.com", "member");
    const grant = await issueGrant({ config: server.config, store: server.store, now: Date.now }, {
      accountId: ownerAccount.id,
      businessId: business.id,
      clientId: "a1b2c3-client-id",
      clientName: "Claude Desktop",
      scopes: ["app.access", "billing.read"],
    });
    const memberBrowser = await signInThroughForms(auth, outbox, "member@example.com");

    await t.step("an agent reads by its name; its ids only on demand", async () => {
      const page = await owner.get(`${auth}/account`);
      assert.equal(page.status, 200);
      assert.match(page.text, /<section class="card" aria-labelledby="business-/);
      assert.match(page.text, /data-label="Agent"><strong>Claude Desktop<\/strong>/);
      // Every place the client id appears is inside an "Ids" disclosure.
      for (const match of page.text.matchAll(/a1b2c3-client-id/g)) {
        const before = page.text.slice(0, match.index);
        assert.ok(before.lastIndexOf('<details class="id">') > before.lastIndexOf("</details>"));
      }
      assert.ok(
        page.text.includes(
          `<code>client a1b2c3-client-id · grant ${grant.grantId}</code>`,
        ),
      );
      assert.match(page.text, /data-label="Permissions">app\.access billing\.read</);
      assert.match(page.text, /authorized <time datetime="[^"]+">/);
      assert.match(page.text, /connection test not run/);
      assert.match(page.text, /class="button destructive"\s+aria-label="Revoke Claude Desktop"/);
    });

    await t.step(
      "an owner sees the members with their roles, approvals and the audit log",
      async () => {
        const page = await owner.get(`${auth}/account`);
        const text = page.text.replace(/\s+/g, " ");
        assert.match(text, /<caption>People in this business<\/caption>/);
        assert.match(
          text,
          /<td data-label="Person">member@example\.com<\/td><td data-label="Role">Member</,
        );
        assert.match(
          text,
          /<td data-label="Person">owner@example\.com<\/td><td data-label="Role">Owner</,
        );
        assert.match(
          text,
          /<h4>Waiting for your approval<\/h4>\s*<p class="muted">Nothing is waiting\.<\/p>/,
        );
        assert.ok(text.includes(`href="/account/audit?business=${business.id}">Audit log</a>`));
      },
    );

    await t.step(
      "a member sees their role, no member list, no approvals, their own audit log",
      async () => {
        const page = await memberBrowser.get(`${auth}/account`);
        assert.equal(page.status, 200);
        assert.match(page.text, /<dt>Your role<\/dt>\s*<dd>Member<\/dd>/);
        assert.match(page.text, /You are a member of this business/);
        assert.doesNotMatch(page.text, /People in this business/);
        assert.doesNotMatch(page.text, /Waiting for your approval/);
        assert.ok(
          page.text.includes(`href="/account/audit?business=${business.id}">Your audit log</a>`),
        );
        assert.doesNotMatch(page.text, /action="\/account\/members"/);
        assert.match(page.text, /No agent acts for you in this business/);
        assert.equal(member.role, "member");
      },
    );
  } finally {
    await server.close();
  }
});
