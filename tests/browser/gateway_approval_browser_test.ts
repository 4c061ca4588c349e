// The official MCP SDK client is the agent; the owner is a person in a real browser (Debian's
// chromium through playwright-core). The agent meets the 401 and the person signs in with the
// log mailer's link and consents; the agent's gated call to the tiny upstream's add waits; the
// person opens the approval mail's link, reads the upstream, the tool and the exact arguments,
// and presses Approve (then Decline on a second call). get_approval returns the stored result,
// and the upstream was called exactly once.
import assert from "node:assert/strict";
import { chromium, type Page } from "npm:playwright-core@^1.56.0";
import { tempOutbox } from "../blackbox/support/accounts_browser.ts";
import { startGatewayServer } from "../blackbox/support/gateway_support.ts";
import { signIn } from "../blackbox/support/workspace_support.ts";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { createAccounts } from "../../src/accounts/accounts.ts";
import type { Mail } from "../../src/mail/mailer.ts";
import { startTinyUpstream } from "../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../testkit/tiny_upstream_tools.ts";
import { until, writeUpstreamsFile } from "../blackbox/support/gateway_support.ts";
import { freePorts } from "../../testkit/ports.ts";
import { oauthFixture } from "../blackbox/support/oauth_helpers.ts";
import { MemoryProvider } from "../interop/memory_provider.ts";
import { CHROMIUM, chromiumAvailable, SHOTS } from "./chromium.ts";
import { checkPage } from "./page_check.ts";

const available = chromiumAvailable("the browser approval test");

interface Pending {
  readonly gateId: string;
  readonly status: string;
  readonly approvalUrl: string;
}

/** The mails the log mailer (VESTIBULE_MAIL=log, the default) wrote to the server's log. */
function loggedMails(logs: readonly string[]): Mail[] {
  return logs.filter((line) => line.includes('"mail (development mailer)"'))
    .map((line) => JSON.parse(line) as Mail);
}

Deno.test({
  name: "an owner in Chromium signs in, consents, and approves the SDK agent's gated upstream call",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await Deno.mkdir(SHOTS, { recursive: true });
    const tiny = startTinyUpstream();
    const file = await writeUpstreamsFile([
      { name: "tiny", title: "Tiny", url: tiny.url, gated: ["add"] },
    ]);
    const fx = await oauthFixture({ VESTIBULE_UPSTREAMS: file, VESTIBULE_MAIL: "log" });
    await createAccounts(fx.server.store, fx.clock.now)
      .createAccountWithBusiness("owner@example.com", "Acme Outdoor");
    const callbackPort = freePorts(1)[0]!;
    const callback = Deno.serve(
      { hostname: "127.0.0.1", port: callbackPort, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>Back in the agent</title><p>Done.</p>", {
          headers: { "Content-Type": "text/html" },
        }),
    );
    const provider = new MemoryProvider(`http://127.0.0.1:${callbackPort}/callback`);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const page = await browser.newPage();
    const shot = (name: string) => checkPage(page, name);
    const connection = () => ({
      client: new Client({ name: "vestibule-gateway-chromium", version: "1.0.0" }),
      transport: new StreamableHTTPClientTransport(new URL(`${fx.server.apiUrl}/api/mcp`), {
        authProvider: provider,
      }),
    });
    let { client, transport } = connection();
    /** The newest mail to `subject`, once the outbox has sent it. */
    const mail = (subject: RegExp) =>
      until(
        `a mail "${subject.source}"`,
        () => loggedMails(fx.server.logs).findLast((m) => subject.test(m.subject)),
      );
    /** The person allows every scope they may tick; the agent finishes with the code. */
    const consentInBrowser = async () => {
      // A first consent, or a step-up ("Allow more access") that keeps what the agent holds.
      assert.match(await page.locator("h1").innerText(), /Allow (more )?access to Acme Outdoor\?/);
      for (const box of await page.locator("input[name=scope]:not([disabled])").all()) {
        await box.check();
      }
      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL(/\/callback\?/);
      await transport.finishAuth(new URL(page.url()).searchParams.get("code")!);
    };
    const approval = async (gateId: string) =>
      (await client.callTool({ name: "get_approval", arguments: { gateId } }))
        .structuredContent as Record<string, unknown>;
    const text = (locator: ReturnType<Page["locator"]>) => locator.innerText();
    /** The person opens the approval mail's link and reads the call before deciding. */
    const openApproval = async (pending: Pending, args: string, headline: string) => {
      const asked = await mail(new RegExp(`^Approval needed in Acme Outdoor: ${headline}$`));
      assert.equal(asked.link, pending.approvalUrl);
      await page.goto(asked.link);
      assert.equal(await text(page.locator("#gate-status")), "Waiting for an owner's decision");
      const body = await text(page.locator("main"));
      assert.match(body, /Call the tool add of Tiny once/);
      assert.match(body, /The tool add of Tiny/);
      assert.match(body, /With these arguments:/);
      assert.equal(await text(page.locator("pre").first()), args);
    };
    try {
      await t.step(
        "the agent meets the 401; the person signs in from the mail and consents",
        async () => {
          await assert.rejects(client.connect(transport), UnauthorizedError);
          await page.goto(provider.authorizationUrls.at(-1)!.href);
          assert.equal(new URL(page.url()).pathname, "/sign-in");
          await page.fill("#email", "owner@example.com");
          await page.getByRole("button", { name: "Send me a sign-in link" }).click();
          await page.waitForLoadState();
          await page.goto((await mail(/^Sign in to Vestibule$/)).link);
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForLoadState();
          await consentInBrowser();
          ({ client, transport } = connection());
          await client.connect(transport);
          assert.equal(provider.tokens()?.scope, "app.access");
        },
      );

      let first: Pending;
      await t.step(
        "a step-up for upstream.tiny, consented in the browser, then add waits",
        async () => {
          await assert.rejects(
            client.callTool({ name: "tiny__add", arguments: { a: 40, b: 2 } }),
            UnauthorizedError,
          );
          await page.goto(provider.authorizationUrls.at(-1)!.href);
          await consentInBrowser();
          assert.equal(provider.tokens()?.scope, "app.access upstream.tiny");
          const asked = await client.callTool({ name: "tiny__add", arguments: { a: 40, b: 2 } });
          first = asked.structuredContent as unknown as Pending;
          assert.equal(first.status, "pending");
          assert.equal(tiny.calls, 0);
        },
      );

      await t.step(
        "the approval page shows the call; Approve calls it once and shows the answer",
        async () => {
          await openApproval(first, '{\n  "a": 40,\n  "b": 2\n}', "add — a 40, b 2");
          await shot("10-gateway-approval");
          await page.getByRole("button", { name: "Approve" }).click();
          await page.waitForLoadState();
          assert.equal(new URL(page.url()).pathname, `/approvals/${first.gateId}`);
          assert.equal(await text(page.locator("#gate-status")), "Approved and applied");
          const outcome = page.locator("dt:text-is('Outcome') + dd");
          assert.match(
            await text(outcome),
            /^Called add of Tiny: answered \(ok\) in \d+ ms$/,
          );
          assert.equal(
            await text(page.locator("h2:text-is('What the upstream answered') + pre")),
            JSON.stringify(
              { content: [{ text: "42", type: "text" }], structuredContent: { sum: 42 } },
              null,
              2,
            ),
          );
          assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0);
          await shot("11-gateway-approved");

          const view = await approval(first.gateId);
          assert.equal(view.status, "approved");
          assert.deepEqual(view.result, {
            content: [{ type: "text", text: "42" }],
            structuredContent: { sum: 42 },
          });
          assert.equal(tiny.calls, 1);
          assert.deepEqual(tiny.lastCall?.arguments, { a: 40, b: 2 });
          assert.equal(tiny.lastCall?.headers.get("Authorization"), null);
        },
      );

      await t.step("Decline in the browser: the upstream is never called", async () => {
        const asked = await client.callTool({ name: "tiny__add", arguments: { a: 1, b: 1 } });
        const second = asked.structuredContent as unknown as Pending;
        await until(
          "the second approval mail",
          async () => (await mail(/^Approval needed/)).link === second.approvalUrl,
        );
        await openApproval(second, '{\n  "a": 1,\n  "b": 1\n}', "add — a 1, b 1");
        await page.getByRole("button", { name: "Decline" }).click();
        await page.waitForLoadState();
        assert.equal(await text(page.locator("#gate-status")), "Declined");
        assert.equal((await approval(second.gateId)).status, "declined");
        assert.equal(tiny.calls, 1);
      });
    } finally {
      await client.close();
      await browser.close();
      await callback.shutdown();
      await fx.close();
      await tiny.close();
      await Deno.remove(file);
    }
  },
});

const REFUND: TinyTool = {
  definition: {
    name: "refund_customer",
    description: "Refunds an order to the card it was paid with.",
    inputSchema: { type: "object" },
  },
  handler: () => ({ content: [{ type: "text", text: "refunded" }] }),
};
const QUOTE: TinyTool = {
  definition: { name: "quote", description: "Quotes a price.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: "12.00" }] }),
};

Deno.test({
  name: "an owner in Chromium tells three refunds apart, and reads an upstream's change as its own",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    let next: TinyTool[] | null = null;
    const echo: TinyTool = {
      definition: { name: "echo", inputSchema: { type: "object" } },
      handler() {
        if (next !== null) upstream.setTools([echo, REFUND, ...next], { notify: true });
        next = null;
        return { content: [{ type: "text", text: "ok" }] };
      },
    };
    const upstream = startTinyUpstream({ answer: "sse", tools: [echo, REFUND, QUOTE] });
    const outbox = await tempOutbox();
    const ws = await startGatewayServer(
      [{ name: "acme", title: "Acme billing", url: upstream.url, gated: ["refund_customer"] }],
      { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
    );
    const { token } = await ws.token(["app.access", "upstream.acme"]);
    const refunds = [
      { order: 1042, amount: "120.00", currency: "USD" },
      { order: 1043, amount: "7.50", currency: "EUR" },
      { order: 2001, amount: "99.99", currency: "GBP" },
    ];
    for (const args of refunds) {
      const { message } = await ws.call(token, "acme__refund_customer", args);
      assert.equal(message.result.structuredContent.status, "pending");
    }
    const owner = await signIn(ws, outbox, "owner@example.com");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const context = await browser.newContext();
      await context.addCookies(
        [...owner.cookies].map(([name, value]) => ({ name, value, url: ws.server.authUrl })),
      );
      const page = await context.newPage();

      await t.step("the approvals list: three refunds, each row its link and values", async () => {
        await page.goto(`${ws.server.authUrl}/approvals`);
        const rows = page.locator("li.approval");
        assert.equal(await rows.count(), 3);
        for (const [i, args] of [...refunds].reverse().entries()) {
          const row = rows.nth(i);
          assert.match(
            await row.innerText(),
            new RegExp(
              `^refund_customer — order ${args.order}, amount ${args.amount}, currency ${args.currency}\\n` +
                "Acme Outdoor · asked by owner@example.com through .+ · Waiting for an owner's decision · ",
            ),
          );
          assert.match(
            await row.locator("a").getAttribute("href") ?? "",
            /^\/approvals\/[0-9a-f-]{36}$/,
          );
        }
        await checkPage(page, "12-approvals-three-refunds");
      });

      await t.step("a change batch reads as the upstream's, not an agent's request", async () => {
        next = [{ ...QUOTE, definition: { ...QUOTE.definition, description: "Books a price." } }, {
          ...QUOTE,
          definition: { ...QUOTE.definition, name: "quote_again" },
        }];
        await ws.call(token, "acme__echo", {});
        const asked = await until("the change's mail", async () => {
          await ws.toolNames(token);
          return (await outbox.read()).find((m) =>
            m.subject.endsWith(": Acme billing changed or added 2 tools")
          );
        });
        await page.goto(asked.link);
        const facts = await page.locator("dl.facts").innerText();
        assert.match(facts, /Changed by\s+Acme billing, an upstream: no agent asked for this/);
        assert.doesNotMatch(facts, /Asked by/);
        assert.equal(await page.locator("section.batch-tool").count(), 2);
        await checkPage(page, "13-upstream-change-approval");
      });
    } finally {
      await browser.close();
      await ws.close();
      await upstream.close();
    }
  },
});
