// Attacks on the consent form: forged or replayed answers, another session's transaction,
// scopes and businesses the account may not grant, hostile client names, and bad bodies.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { Browser, hiddenField, signInThroughForms } from "../support/accounts_browser.ts";
import {
  assertErrorRedirect,
  authorizeParams,
  authorizeUrl,
  AWKWARD_STATE,
  oauthFixture,
  ownerBrowser,
  postForm,
  registerClient,
  signedInMember,
} from "../support/oauth_helpers.ts";

Deno.test("consent form attacks", async (t) => {
  const fx = await oauthFixture();
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");
    const consentUrl = `${fx.auth}/api/auth/oauth2/consent`;
    const open = async (scope = "app.access members.read", extra: Record<string, string> = {}) => {
      const { params } = await authorizeParams(client, { scope, ...extra });
      const page = await owner.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200);
      return { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
    };
    const decide = (
      fields: Record<string, string>,
      scopes: string[] = ["app.access"],
      who = owner,
    ) => {
      const body = new URLSearchParams(fields);
      for (const s of scopes) body.append("scope", s);
      return postForm(who, consentUrl, body);
    };

    await t.step("without a CSRF token", async () => {
      const { txn } = await open();
      const answer = await decide({ txn, decision: "allow" });
      assert.equal(answer.status, 403);
      assert.match(answer.text, /security token/);
    });
    await t.step("with a wrong CSRF token", async () => {
      const { txn } = await open();
      assert.equal((await decide({ txn, csrf: "forged", decision: "allow" })).status, 403);
    });
    await t.step("a replayed consent (same form twice) fails the second time", async () => {
      const form = await open();
      const first = await decide({ ...form, decision: "allow" });
      assert.equal(first.status, 303);
      const second = await decide({ ...form, decision: "allow" });
      assert.equal(second.status, 400);
      assert.match(second.text, /already answered/);
    });
    await t.step("two concurrent decisions: exactly one code", async () => {
      const form = await open();
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => decide({ ...form, decision: "allow" })),
      );
      assert.equal(answers.filter((a) => a.status === 303).length, 1);
    });
    await t.step("a forged business field is refused", async () => {
      const form = await open();
      const answer = await decide({ ...form, business: "someone-elses", decision: "allow" });
      assert.equal(answer.status, 400);
      assert.match(answer.text, /business cannot be changed/);
    });
    await t.step("every scope unticked: access_denied, state and iss", async () => {
      const form = await open("app.access members.read", { state: AWKWARD_STATE });
      const answer = await decide({ ...form, decision: "allow" }, []);
      assert.equal(answer.status, 303, answer.text);
      assertErrorRedirect(fx, client, answer.response, {
        error: "access_denied",
        description: "No permission was granted",
        state: AWKWARD_STATE,
      });
    });
    await t.step("removed from the business before answering: access_denied", async () => {
      const { accounts, businessId, accountId, browser: leaver } = await signedInMember(
        fx,
        "leaver@example.com",
      );
      const { params } = await authorizeParams(client, { state: AWKWARD_STATE });
      const page = await leaver.get(authorizeUrl(fx, params));
      assert.match(page.text, /Allow access to Acme Bakery\?/);
      const fields = { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
      await accounts.removeMember(businessId, accountId);
      const answer = await decide({ ...fields, decision: "allow" }, ["app.access"], leaver);
      assert.equal(answer.status, 303, answer.text);
      assertErrorRedirect(fx, client, answer.response, {
        error: "access_denied",
        description: "Not a member of the business",
        state: AWKWARD_STATE,
      });
    });
    await t.step("a scope the client did not request is refused", async () => {
      const form = await open("app.access");
      const answer = await decide({ ...form, decision: "allow" }, ["app.access", "billing.manage"]);
      assert.equal(answer.status, 400);
      assert.match(answer.text, /was not requested/);
    });
    await t.step("another session cannot answer someone's transaction", async () => {
      const form = await open();
      const intruder = await ownerBrowser(fx, "intruder@example.com", "Intruder Ltd");
      const { params } = await authorizeParams(client);
      const own = await intruder.get(authorizeUrl(fx, params));
      const csrf = hiddenField(own.text, "csrf");
      const answer = await decide(
        { txn: form.txn, csrf, decision: "allow" },
        ["app.access"],
        intruder,
      );
      assert.equal(answer.status, 400);
    });
    await t.step("signed out: nothing is decided", async () => {
      const form = await open();
      const answer = await decide({ ...form, decision: "allow" }, ["app.access"], new Browser());
      assert.equal(answer.status, 400);
      assert.match(answer.text, /signed out/);
    });
    await t.step("a business the account is not a member of cannot be chosen", async () => {
      const multi = await ownerBrowser(fx, "multi@example.com", "One", "Two");
      const { params } = await authorizeParams(client);
      const page = await multi.get(authorizeUrl(fx, params));
      assert.match(page.text, /Choose a business/);
      assert.match(page.response.headers.get("Content-Security-Policy")!, /frame-ancestors 'none'/);
      const answer = await postForm(
        multi,
        consentUrl,
        new URLSearchParams({
          txn: hiddenField(page.text, "txn"),
          csrf: hiddenField(page.text, "csrf"),
          business: "not-mine",
        }),
      );
      assert.equal(answer.status, 403);
      assert.match(answer.text, /not a member/);
    });
    await t.step("a member forging an owner-only scope is refused", async () => {
      const accounts = createAccounts(fx.server.store, fx.clock.now);
      const boss = await accounts.findAccountByEmail("owner@example.com");
      const [biz] = await accounts.listBusinessesOf(boss!.id);
      await accounts.addMember(biz!.business.id, "clerk@example.com", "member");
      const clerk = await signInThroughForms(fx.auth, fx.outbox, "clerk@example.com");
      const { params } = await authorizeParams(client, { scope: "app.access billing.manage" });
      const page = await clerk.get(authorizeUrl(fx, params));
      const fields = { txn: hiddenField(page.text, "txn"), csrf: hiddenField(page.text, "csrf") };
      const answer = await decide({ ...fields, decision: "allow" }, [
        "app.access",
        "billing.manage",
      ], clerk);
      assert.equal(answer.status, 403);
      assert.match(answer.text, /Only an owner can grant/);
    });
    await t.step("a hostile client name is shown as text; no name is said so", async () => {
      const hostile = await registerClient(fx, { client_name: '<img src=x onerror="alert(1)">' });
      const { params } = await authorizeParams(hostile);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.match(
        page.text,
        /<dd id="client-name">&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;<\/dd>/,
      );
      assert.doesNotMatch(page.text, /<img/);
      const nameless = await registerClient(fx, { client_name: undefined });
      const unnamed = await owner.get(authorizeUrl(fx, (await authorizeParams(nameless)).params));
      assert.match(unnamed.text, /<dd id="client-name">An unnamed application<\/dd>/);
    });

    await t.step("oversized and malformed consent bodies", async () => {
      const huge = await postForm(
        owner,
        consentUrl,
        new URLSearchParams({ txn: "x".repeat(20_000) }),
      );
      assert.equal(huge.status, 413);
      const wrongType = await fetch(consentUrl, {
        method: "POST",
        body: "{}",
        headers: { "Content-Type": "application/json" },
      });
      await wrongType.body?.cancel();
      assert.equal(wrongType.status, 415);
    });
  } finally {
    await fx.close();
  }
});
