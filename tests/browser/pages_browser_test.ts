// Every human page the other browser tests do not walk through, in Chromium at a desktop and a
// phone width, checked by axe-core and for fitting the screen (page_check.ts): the public site,
// the connection guide, sign-in and its dead ends, approvals as owner and member with the
// owner's confirmation, the account page of both (with "Connect your agent" and its copy
// button) with a busy audit log, the servers page of both, sign-out, and the error pages.
import assert from "node:assert/strict";
import { type BrowserContext, chromium, type Page } from "npm:playwright-core@^1.56.0";
import { tempOutbox } from "../blackbox/support/accounts_browser.ts";
import type { Browser } from "../blackbox/support/accounts_browser.ts";
import { signIn } from "../blackbox/support/workspace_support.ts";
import { startGatewayServer, until } from "../blackbox/support/gateway_support.ts";
import { issueGrant } from "../../testkit/issue_grant.ts";
import { startTinyUpstream } from "../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../testkit/tiny_upstream_tools.ts";
import { freePort } from "../../testkit/ports.ts";
import { createAuditLog } from "../../src/workspace/domain/audit.ts";
import { CHROMIUM, chromiumAvailable } from "./chromium.ts";
import { buttonLines, checkPage } from "./page_check.ts";

const available = chromiumAvailable("the pages browser test");

Deno.test({
  name:
    "every human page reads well at desktop and phone widths, with no serious accessibility finding",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const outbox = await tempOutbox();
    // An upstream whose tools are gated, hidden and changed (held), and one that is down.
    const tool = (name: string, description: string): TinyTool => ({
      definition: { name, description, inputSchema: { type: "object" } },
      handler: () => ({ content: [{ type: "text", text: name }] }),
    });
    const tools = [
      ADD_TOOL,
      tool("refund_customer", "Refunds an order to the customer's card, in full or in part."),
      tool("quote", "Quotes a price."),
      tool("export_everything", "Exports every record."),
    ];
    const changeQuote: TinyTool = {
      ...tool("change_quote", "Changes the quote tool."),
      handler() {
        shop.setTools([
          ...tools.filter((t) => t.definition.name !== "quote"),
          tool("quote", "Quotes a price, in euros, with tax."),
          changeQuote,
        ], { notify: true });
        return { content: [{ type: "text", text: "changed" }] };
      },
    };
    const shop = startTinyUpstream({ answer: "sse", tools: [...tools, changeQuote] });
    const ws = await startGatewayServer([
      {
        name: "shop",
        title: "Acme Shop",
        url: shop.url,
        gated: ["refund_customer"],
        hidden: ["export_everything"],
      },
      { name: "ledger", title: "Ledger (down)", url: `http://127.0.0.1:${freePort()}/mcp` },
    ], { VESTIBULE_MAIL: outbox.env });
    const { baseUrl: base, authUrl: auth } = ws.server;
    const { token: shopToken } = await ws.token(["app.access", "upstream.shop"]);
    await ws.toolNames(shopToken);
    await ws.call(shopToken, "shop__change_quote");
    await until(
      "the changed quote held",
      async () => (await ws.call(shopToken, "shop__quote")).message.result?.isError === true,
    );
    // A busy account and audit log: an agent with a long name and many permissions, long
    // summaries and actions (the audit page once scrolled sideways on a phone, and "Revoke"
    // wrapped at desktop width).
    const longAgent = "Claude Desktop for the refunds and billing operations team (eu-west)";
    await issueGrant({ config: ws.server.config, store: ws.server.store, now: Date.now }, {
      accountId: ws.ownerId,
      businessId: ws.businessId,
      clientId: "https://agents.example.com/clients/refunds-and-billing-operations/metadata.json",
      clientName: longAgent,
      scopes: [
        "app.access",
        "workflows.run",
        "skills.draft",
        "billing.read",
        "upstream.shop",
        "records.write",
      ],
    });
    const audit = createAuditLog(ws.server.store, Date.now);
    for (let i = 0; i < 12; i++) {
      await audit.append({
        businessId: ws.businessId,
        accountId: i % 2 === 0 ? ws.ownerId : ws.memberId,
        actor: "agent",
        clientId: "https://agents.example.com/clients/refunds-and-billing-operations/metadata.json",
        action: i % 3 === 0 ? "approve_tool_definition_change_batch" : "shop__refund_customer",
        summary: `called shop__refund_customer with {"order":"ORD-2026-000104${i}",` +
          `"amount":"120.00","currency":"USD","reason":"damaged-on-arrival-replacement-sent"}`,
        gateId: null,
      });
    }
    await ws.workspace.workflows.put(ws.businessId, {
      id: "wf-1",
      name: "Refund triage",
      description: "",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const { token } = await ws.token(["app.access", "workflows.run"]);
    const requestRun = async (): Promise<string> =>
      (await ws.call(token, "start_workflow", { workflowId: "wf-1" })).message.result
        .structuredContent.approvalUrl;
    const toApprove = await requestRun();
    // A member reads only their own agents' requests: the one waiting is theirs.
    const { token: memberToken } = await ws.token(["app.access", "skills.draft"], {
      accountId: ws.memberId,
    });
    const waiting: string = (await ws.call(memberToken, "draft_skill", {
      name: "Refund notes",
      description: "Writes refund notes",
      instructions: "Summarise each refund in one line.",
    })).message.result.structuredContent.approvalUrl;
    const owner = await signIn(ws, outbox, "owner@example.com");
    const member = await signIn(ws, outbox, "member@example.com");

    const userDataDir = await Deno.makeTempDir({ prefix: "vestibule-chromium-" });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    /** A browser context signed in with the cookies of a black-box sign-in, or signed out. */
    const person = async (signedIn: Browser | null): Promise<BrowserContext> => {
      const context = await browser.newContext();
      // The copy buttons of /account write to the clipboard; the test reads it back.
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: auth });
      if (signedIn !== null) {
        await context.addCookies(
          [...signedIn.cookies].map(([name, value]) => ({ name, value, url: auth })),
        );
      }
      return context;
    };
    /** "Connect your agent": the script the CSP allows shows the copy button, which copies. */
    const copiesTheMcpAddress = async (page: Page) => {
      const mcpUrl = `${ws.server.apiUrl}/api/mcp`;
      assert.equal(await page.locator("#mcp-url").innerText(), mcpUrl);
      await page.getByRole("button", { name: "Copy the MCP address" }).click();
      // The page says so once the clipboard has taken the text, which may be after the click.
      await page.locator("#copy-status", { hasText: "Cop" }).waitFor({ state: "attached" });
      assert.equal(await page.locator("#copy-status").innerText(), "Copied: the MCP address.");
      assert.equal(await page.evaluate("navigator.clipboard.readText()"), mcpUrl);
    };
    try {
      const anonymous = await (await person(null)).newPage();
      const visit = async (url: string, name: string, status = 200) => {
        const response = await anonymous.goto(url);
        assert.equal(response?.status(), status, url);
        await checkPage(anonymous, name);
      };

      await t.step("the public site and the connection guide", async () => {
        await visit(`${base}/`, "40-site-index");
        await visit(`${base}/developers`, "41-site-developers");
        for (const legal of ["contact", "privacy", "terms"]) {
          await visit(`${base}/${legal}`, `42-site-${legal}`);
        }
        await visit(`${auth}/agents`, "43-agents-guide");
      });

      await t.step("the error pages of both origins people browse", async () => {
        await visit(`${base}/no-such-page`, "49-not-found-site", 404);
        await visit(`${auth}/no-such-page`, "49-not-found-auth", 404);
      });

      await t.step("sign-up, sign-in with what waits, the mail sent, a dead link", async () => {
        await visit(`${auth}/sign-up`, "44-sign-up");
        const path = new URL(waiting).pathname;
        await visit(`${auth}/sign-in?return_to=${encodeURIComponent(path)}`, "45-sign-in-waiting");
        assert.match(
          await anonymous.locator("#waiting").innerText(),
          /approval request is waiting/,
        );
        await anonymous.fill("#email", "someone@example.com");
        await anonymous.getByRole("button", { name: "Send me a sign-in link" }).click();
        await anonymous.waitForLoadState();
        await checkPage(anonymous, "46-check-mail");
        await visit(`${auth}/sign-in/verify?token=spent`, "47-dead-link", 410);
        await visit(
          `${auth}/api/auth/oauth2/authorize?client_id=nobody`,
          "48-authorize-error",
          400,
        );
      });

      await t.step(
        "an owner reads an approval, approves it and is told what happened",
        async () => {
          const page = await (await person(owner)).newPage();
          await page.goto(`${auth}/approvals`);
          await checkPage(page, "50-approvals");
          await page.goto(toApprove);
          await checkPage(page, "51-approval-pending");
          await page.getByRole("button", { name: "Approve" }).click();
          await page.waitForLoadState();
          assert.match(
            await page.locator("#decision-confirmation").innerText(),
            /^You approved it\. Done: Start one run of the paid workflow "Refund triage"/,
          );
          await checkPage(page, "52-approval-confirmed");
          await page.goto(`${auth}/account`);
          await checkPage(page, "53-account-owner");
          await copiesTheMcpAddress(page);
          const revokes = await buttonLines(page, "Revoke");
          assert.deepEqual(revokes, [1, 1], "a Revoke button wraps at desktop width");
          await page.getByRole("link", { name: "Audit log" }).first().click();
          await page.waitForLoadState();
          assert.equal(new URL(page.url()).pathname, "/account/audit");
          await checkPage(page, "53-audit-log");
          await page.goto(`${auth}/account`);
          await page.getByRole("link", { name: "Servers and tools" }).first().click();
          await page.waitForLoadState();
          assert.equal(new URL(page.url()).pathname, "/account/servers");
          assert.match(await page.locator("main").innerText(), /Acme Shop[\s\S]*refund_customer/);
          await page.locator("details.definition summary").first().click();
          await checkPage(page, "57-servers-owner");
          await page.goto(`${auth}/sign-out`);
          await checkPage(page, "54-sign-out");
        },
      );

      await t.step("a member reads their agent's request, which an owner decides", async () => {
        const page = await (await person(member)).newPage();
        await page.goto(waiting);
        await checkPage(page, "55-approval-member");
        await page.goto(`${auth}/account`);
        await checkPage(page, "56-account-member");
        await copiesTheMcpAddress(page);
        await page.getByRole("link", { name: "Your audit log" }).first().click();
        await page.waitForLoadState();
        await checkPage(page, "56-audit-log-member");
        await page.goto(`${auth}/account`);
        await page.getByRole("link", { name: "Servers and tools" }).first().click();
        await page.waitForLoadState();
        assert.match(await page.locator("main").innerText(), /Acme Shop/);
        await checkPage(page, "58-servers-member");
      });
    } finally {
      await browser.close();
      await Deno.remove(userDataDir, { recursive: true });
      await ws.close();
      await shop.close();
    }
  },
});
