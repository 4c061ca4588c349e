// The servers page (/account/servers), end to end: a real server in front of a tiny upstream, one
// that never answers and one whose file names a tool it does not list. An owner reads each
// upstream's state and every tool with its settings, pinned definition and held change; a member
// reads only which servers exist (and whether they connected a per-person one); someone else's
// business is not found.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { freePort } from "../../../testkit/ports.ts";
import { type Browser, tempOutbox } from "../support/accounts_browser.ts";
import { signIn } from "../support/workspace_support.ts";
import { startGatewayServer, until } from "../support/gateway_support.ts";
import { connect, personBrowser, startPersonUpstream } from "../support/person_upstream_support.ts";

const tool = (name: string, description = `The ${name} tool.`): TinyTool => ({
  definition: { name, description, inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: name }] }),
});

/** The table row (`<tr>…</tr>`) of the page naming the tool `name`. */
function rowOf(page: string, name: string): string {
  const row = page.split("<tr>").find((part) => part.includes(`<code>${name}</code>`));
  assert.ok(row, `no row for ${name}`);
  return row.split("</tr>")[0]!;
}

/** The section of one upstream on an owner's page. */
function sectionOf(page: string, upstream: string): string {
  const start = page.indexOf(`data-upstream="${upstream}"`);
  assert.ok(start >= 0, `no section for ${upstream}`);
  return page.slice(start, page.indexOf("</section>", start));
}

/** The servers page's address, as the /account link gives it. */
async function serversLink(browser: Browser, auth: string): Promise<string> {
  const account = await browser.get(`${auth}/account`);
  assert.equal(account.status, 200);
  const link = account.text.match(/<a class="button [a-z]+" href="([^"]+)">([^<]+)<\/a>/g)
    ?.map((a) => a.match(/href="([^"]+)">([^<]+)</)!)
    .find(([, , words]) => /servers|upstreams|tools/i.test(words!));
  assert.ok(link, "no link to the servers page on /account");
  return `${auth}${link[1]!.replaceAll("&amp;", "&")}`;
}

Deno.test("the servers page shows owners each upstream and its tools, and members only which exist", async (t) => {
  // Calling `echo` makes the shop change quote's description, and say its list changed.
  const echo: TinyTool = {
    ...tool("echo"),
    handler() {
      shop.setTools([
        ...tools.slice(0, 2),
        tool("quote", "Quotes a price, in euros."),
        ...tools.slice(3),
        echo,
      ], {
        notify: true,
      });
      return { content: [{ type: "text", text: "echo" }] };
    },
  };
  const tools = [ADD_TOOL, tool("refund"), tool("quote", "Quotes a price."), tool("secret_dump")];
  const shop = startTinyUpstream({ answer: "sse", tools: [...tools, echo] });
  const misnamed = startTinyUpstream({ tools: [tool("pay")] });
  const outbox = await tempOutbox();
  const ws = await startGatewayServer([
    {
      name: "shop",
      title: "Acme Shop",
      url: shop.url,
      gated: ["refund"],
      hidden: ["secret_dump"],
      scopes: { refund: "upstream.shop.refunds" },
    },
    { name: "gone", title: "Gone Service", url: `http://127.0.0.1:${freePort()}/mcp` },
    { name: "misnamed", title: "Misnamed", url: misnamed.url, gated: ["payy"] },
  ], { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" });
  try {
    // An agent's listing pins the first definitions; then the upstream changes one.
    const { token } = await ws.token(["app.access", "upstream.shop", "upstream.shop.refunds"]);
    assert.ok((await ws.toolNames(token)).includes("shop__quote"));
    await ws.call(token, "shop__echo", {});
    await until("the changed quote held", async () => {
      const { message } = await ws.call(token, "shop__quote", {});
      return message.result?.isError === true;
    });

    const owner = await signIn(ws, outbox, "owner@example.com");
    const url = await serversLink(owner, ws.server.authUrl);
    const page = (await owner.get(url)).text;

    await t.step("each upstream by its title, with its state and last error in words", () => {
      assert.match(page, /Servers and tools of Acme Outdoor/);
      const shopSection = sectionOf(page, "shop");
      assert.match(shopSection, /Acme Shop/);
      assert.match(shopSection, /data-state="held-changes"/);
      const gone = sectionOf(page, "gone");
      assert.match(gone, /Gone Service/);
      assert.match(gone, /data-state="down"[^>]*>down since <time/);
      assert.match(gone, /Last error:/);
      const held = sectionOf(page, "misnamed");
      assert.match(held, /data-state="held"/);
      assert.match(held, /gated &quot;payy&quot; \(nearest listed: &quot;pay&quot;\)/);
    });

    await t.step(
      "each tool by name, with its scope, gated or hidden, and pinned definition",
      () => {
        const refund = rowOf(page, "refund");
        assert.match(refund, /gated/);
        assert.match(refund, /upstream\.shop\.refunds/);
        assert.match(rowOf(page, "secret_dump"), /hidden/);
        const add = rowOf(page, "add");
        assert.match(add, /<strong>Add<\/strong>/);
        assert.match(add, /Adds two numbers\./);
        assert.doesNotMatch(add, /gated|hidden/);
        assert.match(add, /<details class="definition">\s*<summary>Pinned/);
        assert.match(add, /&quot;inputSchema&quot;/);
      },
    );

    await t.step("a held change links to its approval", async () => {
      const quoteRow = rowOf(page, "quote");
      const gate = quoteRow.match(/href="\/approvals\/([^"]+)"/);
      assert.ok(gate, quoteRow);
      assert.match(quoteRow, /Changed definition held for approval/);
      // The pinned definition is still the one agents see.
      assert.match(quoteRow, /Quotes a price\./);
      assert.doesNotMatch(quoteRow, /in euros/);
      assert.equal((await owner.get(`${ws.server.authUrl}/approvals/${gate[1]}`)).status, 200);
    });

    await t.step("the page says who controls the file, and where", () => {
      assert.match(page, /VESTIBULE_UPSTREAMS/);
      assert.match(page, /operator/);
    });

    await t.step("a member sees the titles, without tools nor gated or hidden", async () => {
      const member = await signIn(ws, outbox, "member@example.com");
      const memberPage = (await member.get(await serversLink(member, ws.server.authUrl))).text;
      for (const title of ["Acme Shop", "Gone Service", "Misnamed"]) {
        assert.match(memberPage, new RegExp(title));
      }
      assert.match(memberPage, /Shared: no account of your own is needed/);
      assert.doesNotMatch(memberPage, /gated|hidden|refund|secret_dump|payy/i);
    });

    await t.step(
      "a business not one's own is not found, and signed out goes to sign in",
      async () => {
        const other = await ws.accounts.createAccountWithBusiness("else@example.com", "Elsewhere");
        const refused = await owner.get(
          `${ws.server.authUrl}/account/servers?business=${other.business.id}`,
        );
        assert.equal(refused.status, 404);
        assert.doesNotMatch(refused.text, /Acme Shop/);
        const anonymous = await fetch(url, { redirect: "manual" });
        await anonymous.body?.cancel();
        assert.equal(anonymous.status, 303);
        assert.match(anonymous.headers.get("Location")!, /\/sign-in/);
      },
    );
  } finally {
    await ws.close();
    await shop.close();
    await misnamed.close();
  }
});

Deno.test("the servers page says a per-person upstream needs connecting until the person connected it", async () => {
  const setup = await startPersonUpstream();
  const { ws } = setup;
  try {
    const url = `${ws.server.authUrl}/account/servers?business=${ws.businessId}`;
    const owner = await personBrowser(setup);
    const member = await personBrowser(setup, "member@example.com");
    const before = (await owner.get(url)).text;
    assert.match(sectionOf(before, "crm"), /data-state="needs-connecting"/);
    assert.match(before, /Connect your Acme CRM account/);
    assert.match((await member.get(url)).text, /data-upstream="crm" data-status="none"/);

    assert.equal((await connect(setup, owner, "alice")).status, 200);
    const after = (await owner.get(url)).text;
    assert.doesNotMatch(sectionOf(after, "crm"), /needs-connecting/);
    assert.match(after, /data-upstream="crm" data-status="connected">You connected your account/);
    // Each person's own: the member still has not.
    assert.match((await member.get(url)).text, /data-upstream="crm" data-status="none"/);
  } finally {
    await setup.close();
  }
});
