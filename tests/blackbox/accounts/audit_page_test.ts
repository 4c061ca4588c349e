// The audit page over HTTP on the real server: owners only, 50 entries a page, older and newer
// pages without overlap or gap, filters that combine and stay in the paging links, and a bad
// field is a 400 page naming it.
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import {
  Browser,
  type Page,
  signInThroughForms,
  signUpThroughForms,
} from "../support/accounts_browser.ts";
import { ownerFixture } from "../support/owner_fixture.ts";

const HOUR = 3_600_000;
const FIRST = Date.UTC(2026, 2, 1); // entry i at FIRST + i hours: 24 a day from 1 March
const ENTRIES = 120;

/** The entries a page shows, by their number (the summary is `entry-<i>`). */
const shown = (page: Page) =>
  [...page.text.matchAll(/data-label="What">entry-(\d+) /g)].map((m) => Number(m[1]));

/** The page's link labelled `label`, as a path, or null. */
const linkOf = (page: Page, label: "Older" | "Newer") => {
  const match = new RegExp(`href="([^"]+)">${label}</a>`).exec(page.text);
  return match === null ? null : match[1]!.replaceAll("&amp;", "&");
};

Deno.test("the audit page pages and filters a business's log for its owners", async (t) => {
  const { server, auth, outbox, accounts, owner, account: ownerAccount, business } =
    await ownerFixture("owner@example.com", "Audit Ltd");
  try {
    const member = await accounts.addMember(business.id, "member@example.com", "member");
    const memberBrowser = await signInThroughForms(auth, outbox, "member@example.com");
    const stranger = new Browser();
    await signUpThroughForms(stranger, auth, outbox, "stranger@example.com", "Else");

    // The agent "client-a" has a name (its grant's); "client-b" has none left, so its id shows.
    await issueGrant({ config: server.config, store: server.store, now: Date.now }, {
      accountId: ownerAccount.id,
      businessId: business.id,
      clientId: "client-a",
      clientName: "Claude <Desktop>",
      scopes: ["app.access"],
    });
    let at = FIRST;
    const audit = createAuditLog(server.store, () => at);
    for (let i = 0; i < ENTRIES; i++) {
      at = FIRST + i * HOUR;
      await audit.append({
        businessId: business.id,
        accountId: i % 2 === 0 ? ownerAccount.id : member.accountId,
        actor: "agent",
        clientId: i % 3 === 0 ? "client-a" : "client-b",
        action: i % 4 === 0 ? "rename_business" : "create_record",
        summary: `entry-${i}`,
        gateId: null,
      });
    }
    const url = (query: string) => `${auth}/account/audit?business=${business.id}${query}`;
    const all = Array.from({ length: ENTRIES }, (_, i) => ENTRIES - 1 - i);

    /** Every entry from a first page on, following "Older" to the end. */
    const followOlder = async (first: string) => {
      const pages: number[][] = [];
      let next: string | null = first;
      while (next !== null) {
        const page = await owner.get(next.startsWith("/") ? `${auth}${next}` : next);
        assert.equal(page.status, 200, page.text);
        pages.push(shown(page));
        next = linkOf(page, "Older");
      }
      return pages;
    };

    await t.step("signed out, it sends to sign in and back", async () => {
      const page = await new Browser().get(url(""));
      assert.equal(page.status, 303);
      const location = new URL(page.response.headers.get("Location")!);
      assert.equal(location.pathname, "/sign-in");
      assert.equal(
        location.searchParams.get("return_to"),
        `/account/audit?business=${business.id}`,
      );
    });

    await t.step("the first page: the 50 newest, in words, with ids on demand", async () => {
      const page = await owner.get(url(""));
      assert.equal(page.status, 200);
      assert.equal(page.response.headers.get("Cache-Control"), "no-store");
      assert.match(page.response.headers.get("Content-Security-Policy")!, /frame-ancestors 'none'/);
      assert.deepEqual(shown(page), all.slice(0, 50));
      assert.match(page.text, /<h1>Audit log of Audit Ltd<\/h1>/);
      // Names and e-mails, not ids; the ids in "Details".
      assert.match(page.text, /data-label="Agent">Claude &lt;Desktop&gt;</);
      assert.match(page.text, /data-label="Who">member@example\.com/);
      assert.match(page.text, /<summary>Details<\/summary><code>action create_record · client/);
      assert.doesNotMatch(page.text, /data-label="Agent">client-a/);
      assert.equal(linkOf(page, "Newer"), null);
      assert.notEqual(linkOf(page, "Older"), null);
      // The selects offer what the log holds: agents by name, people by e-mail, actions.
      assert.match(page.text, /<option value="client-a" >Claude &lt;Desktop&gt;<\/option>/);
      assert.match(page.text, new RegExp(`<option value="${member.accountId}" >member@`));
      assert.match(page.text, /<option value="rename_business" >rename business<\/option>/);
    });

    await t.step("Older leads through every entry once, Newer back", async () => {
      const pages = await followOlder(url(""));
      assert.deepEqual(pages.map((p) => p.length), [50, 50, 20]);
      assert.deepEqual(pages.flat(), all, "no overlap, no gap");
      const second = await owner.get(`${auth}${linkOf(await owner.get(url("")), "Older")}`);
      const back = await owner.get(`${auth}${linkOf(second, "Newer")}`);
      assert.deepEqual(shown(back), all.slice(0, 50));
      assert.equal(linkOf(back, "Newer"), null, "back on the newest page");
    });

    await t.step("each filter, alone and combined, in every page's links", async () => {
      const cases = [
        { query: "&agent=client-a", keep: (i: number) => i % 3 === 0 },
        { query: `&person=${member.accountId}`, keep: (i: number) => i % 2 === 1 },
        { query: "&action=rename_business", keep: (i: number) => i % 4 === 0 },
        // 2 March is entries 24 to 47; from 4 March on, 72 to 119.
        { query: "&from=2026-03-02&to=2026-03-02", keep: (i: number) => i >= 24 && i < 48 },
        { query: "&from=2026-03-04", keep: (i: number) => i >= 72 },
        { query: "&to=2026-03-01", keep: (i: number) => i < 24 },
        {
          query: `&agent=client-b&person=${ownerAccount.id}&from=2026-03-02`,
          keep: (i: number) => i % 3 !== 0 && i % 2 === 0 && i >= 24,
        },
      ];
      for (const { query, keep } of cases) {
        const pages = await followOlder(url(query));
        assert.deepEqual(pages.flat(), all.filter(keep), query);
        assert.ok(pages.every((p) => p.length <= 50), query);
      }
      const page = await owner.get(url("&agent=client-b&action=create_record"));
      const older = linkOf(page, "Older")!;
      assert.match(older, /agent=client-b/);
      assert.match(older, /action=create_record/);
      const none = await owner.get(url("&agent=client-a&person=nobody"));
      assert.deepEqual(shown(none), []);
      assert.match(none.text, /No entry matches these filters/);
    });

    await t.step("a bad cursor or date is a 400 page naming the field", async () => {
      const cases = [
        { query: "&older=not-a-cursor", names: /&quot;older&quot; is not a position/ },
        { query: `&newer=${btoa("[1,2]")}`, names: /&quot;newer&quot; is not a position/ },
        { query: "&from=2026-02-30", names: /&quot;from&quot; must be a day written YYYY-MM-DD/ },
        { query: "&to=yesterday", names: /&quot;to&quot; must be a day/ },
        {
          query: "&from=2026-03-05&to=2026-03-04",
          names: /&quot;from&quot; \(2026-03-05\) is after/,
        },
      ];
      for (const { query, names } of cases) {
        const page = await owner.get(url(query));
        assert.equal(page.status, 400, query);
        assert.match(page.text, names, query);
        assert.equal(page.response.headers.get("Cache-Control"), "no-store");
      }
      const missing = await owner.get(`${auth}/account/audit`);
      assert.equal(missing.status, 400);
      assert.match(missing.text, /&quot;business&quot; is required/);
    });

    await t.step(
      "a member reads only their own account's entries, whatever the link asks",
      async () => {
        const odd = all.filter((i) => i % 2 === 1);
        for (const query of ["", `&person=${ownerAccount.id}`]) {
          const page = await memberBrowser.get(url(query));
          assert.equal(page.status, 200, page.text);
          assert.match(page.text, /Your audit log in Audit Ltd/);
          assert.doesNotMatch(page.text, /owner@example\.com/);
          assert.doesNotMatch(page.text, /id="person"/);
          const entries: number[] = [];
          let next: string | null = url(query);
          while (next !== null) {
            const read: Page = await memberBrowser.get(
              next.startsWith("/") ? `${auth}${next}` : next,
            );
            entries.push(...shown(read));
            next = linkOf(read, "Older");
          }
          assert.deepEqual(entries, odd, query);
        }
      },
    );

    await t.step("a stranger or an unknown business reads not found", async () => {
      for (
        const [who, browser, target] of [
          ["stranger", stranger, url("")],
          ["unknown business", owner, `${auth}/account/audit?business=no-such-business`],
        ] as const
      ) {
        const page = await browser.get(target);
        assert.equal(page.status, 404, who);
        assert.match(page.text, /Audit log not found/, who);
        assert.doesNotMatch(page.text, /entry-\d+/, who);
      }
    });

    await t.step("HEAD answers as GET without a body; POST is 405", async () => {
      const head = await fetch(url(""), {
        method: "HEAD",
        headers: { Cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
      });
      assert.equal(head.status, 200);
      assert.equal(await head.text(), "");
      const post = await owner.post(url(""), {});
      assert.equal(post.status, 405);
      assert.match(post.response.headers.get("Allow")!, /GET/);
    });
  } finally {
    await server.close();
  }
});
