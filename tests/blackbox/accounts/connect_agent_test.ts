// "Connect your agent" on /account: the workspace MCP address in full with the common clients'
// snippets, for owners and members alike, copy buttons that need a script the page's CSP allows
// (and the page without it), and the welcome after a sign-up.
import assert from "node:assert/strict";
import { followLink, signInThroughForms, submitForm } from "../support/accounts_browser.ts";
import { ownerFixture } from "../support/owner_fixture.ts";

/** The text of a page's HTML, its entities decoded (what a person reads and copies). */
function _text(html: string): string {
  return html.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");
}

/** The content of the element with `id`, as text. */
function _element(html: string, id: string): string {
  const match = html.match(new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</code>`));
  assert.ok(match, `no element #${id}`);
  return _text(match[1]!);
}

Deno.test("/account tells owners and members how to connect their agent", async (t) => {
  const fx = await ownerFixture("owner@example.com", "Acme Bakery");
  const mcpUrl = `${fx.server.apiUrl}/api/mcp`;
  try {
    await t.step("the owner reads the MCP address and a snippet per client", async () => {
      const page = await fx.owner.get(`${fx.auth}/account`);
      assert.equal(page.status, 200);
      assert.match(page.text, /<h2 id="connect-agent-title">Connect your agent<\/h2>/);
      assert.equal(_element(page.text, "mcp-url"), mcpUrl);
      assert.equal(
        _element(page.text, "snippet-claude-code"),
        `claude mcp add --transport http vestibule ${mcpUrl}`,
      );
      assert.deepEqual(JSON.parse(_element(page.text, "snippet-vscode")), {
        servers: { vestibule: { type: "http", url: mcpUrl } },
      });
      assert.deepEqual(JSON.parse(_element(page.text, "snippet-cursor")), {
        mcpServers: { vestibule: { url: mcpUrl } },
      });
      assert.deepEqual(JSON.parse(_element(page.text, "snippet-claude-desktop")), {
        mcpServers: { vestibule: { command: "npx", args: ["-y", "mcp-remote", mcpUrl] } },
      });
      assert.match(_text(page.text), /you sign\s+in, choose the business and tick what the agent/);
      assert.match(page.text, /<a href="\/sign-up">Add another business<\/a>/, "an owner's");
    });

    await t.step("copy buttons come from our own script file, allowed by the CSP", async () => {
      const page = await fx.owner.get(`${fx.auth}/account`);
      const csp = page.response.headers.get("Content-Security-Policy") ?? "";
      assert.match(csp, /(^|; )script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      assert.deepEqual(scripts.map((s) => [s[1]!.trim(), s[2]]), [
        ['src="/assets/copy.js" defer', ""],
      ]);
      assert.doesNotMatch(page.text, /\son[a-z]+=/i, "no inline handlers");
      // Without the script the buttons are not shown: the text is there to select.
      const buttons = [...page.text.matchAll(/<button type="button"[^>]*>/g)].map((m) => m[0]);
      assert.equal(buttons.length, 5);
      for (const button of buttons) assert.match(button, /\shidden>$/);
      const script = await fx.owner.get(`${fx.auth}/assets/copy.js`);
      assert.equal(script.status, 200);
      assert.match(script.response.headers.get("Content-Type")!, /^text\/javascript/);
      assert.match(script.text, /navigator\.clipboard/);
    });

    await t.step("a member sees the same, and is not sent to add a business", async () => {
      await fx.accounts.addMember(fx.business.id, "member@example.com", "member");
      const member = await signInThroughForms(fx.auth, fx.outbox, "member@example.com");
      const page = await member.get(`${fx.auth}/account`);
      assert.equal(page.status, 200);
      assert.equal(_element(page.text, "mcp-url"), mcpUrl);
      assert.match(_element(page.text, "snippet-claude-code"), /^claude mcp add --transport http/);
      assert.doesNotMatch(page.text, /Add another business/);
    });

    await t.step("a sign-up ends on a welcome with the same section", async () => {
      const before = (await fx.outbox.read()).length;
      const sent = await submitForm(fx.owner, `${fx.auth}/sign-up`, `${fx.auth}/sign-up`, {
        email: "new@example.com",
        business: "Fresh Start",
      });
      assert.equal(sent.status, 200);
      const mails = await fx.outbox.read();
      assert.equal(mails.length, before + 1);
      const done = await followLink(fx.owner, mails.at(-1)!.link);
      assert.equal(done.status, 303);
      const location = done.response.headers.get("Location")!;
      assert.equal(location, `${fx.auth}/account?welcome`);
      const page = await fx.owner.get(location);
      assert.match(page.text, /id="welcome"/);
      assert.match(page.text, /Connect your agent/);
      assert.equal(_element(page.text, "mcp-url"), mcpUrl);
    });
  } finally {
    await fx.server.close();
  }
});
