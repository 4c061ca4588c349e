// Per-person upstream sign-in with clients nobody here wrote: the official MCP SDK client is the
// agent, and each person is in Chromium (Debian's, through playwright-core). The agent asks for
// `app.access upstream.crm`; the person signs in with the mailed link, picks the business and
// allows, lands on "connect your Acme CRM account", signs in at oidc-provider's own pages, and
// the agent gets its code. A second person skips connecting: the agent's call is a tool error
// with the connect link, which the person follows. From /account, the first person disconnects:
// the upstream's revocation endpoint is called and the agent's call asks to connect again.
import assert from "node:assert/strict";
import { type BrowserContext, chromium, type Page } from "npm:playwright-core@^1.56.0";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { auth } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import {
  connectPageUrl,
  type PersonUpstreamSetup,
  startPersonUpstream,
} from "../blackbox/support/person_upstream_support.ts";
import { until } from "../blackbox/support/gateway_support.ts";
import { freePorts } from "../../testkit/ports.ts";
import { MemoryProvider } from "../interop/memory_provider.ts";
import { CHROMIUM, chromiumAvailable, SHOTS } from "./chromium.ts";
import { checkPage } from "./page_check.ts";

const available = chromiumAvailable("the per-person upstream browser test");

/** An agent: the SDK client with its own OAuth state, redirected to the test's callback. */
function agent(setup: PersonUpstreamSetup, redirectUrl: string) {
  const serverUrl = new URL(`${setup.ws.server.apiUrl}/api/mcp`);
  const provider = new MemoryProvider(redirectUrl);
  let client: Client | null = null;
  return {
    provider,
    /** Asks for `scope`; the URL the person is sent to. */
    async ask(scope: string): Promise<URL> {
      assert.equal(await auth(provider, { serverUrl, scope }), "REDIRECT");
      return provider.authorizationUrls.at(-1)!;
    },
    /** Finishes with the code the browser brought back, and connects. */
    async finish(callback: string) {
      const code = new URL(callback).searchParams.get("code");
      assert.ok(code, `no code in the redirect back to the agent: ${callback}`);
      assert.equal(await auth(provider, { serverUrl, authorizationCode: code }), "AUTHORIZED");
      client = new Client({ name: "vestibule-person-upstream-chromium", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }),
      );
    },
    async toolNames(): Promise<string[]> {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client!.listTools(cursor === undefined ? {} : { cursor });
        names.push(...page.tools.map((tool: { name: string }) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return names;
    },
    /** crm__whoami: whether it is a tool error, and its text. */
    async whoami(): Promise<{ isError: boolean; text: string }> {
      const result = await client!.callTool({ name: "crm__whoami", arguments: {} });
      const [first] = result.content as { type: string; text: string }[];
      return { isError: result.isError === true, text: first!.text };
    },
    close: () => client?.close(),
  };
}

Deno.test({
  name:
    "people in Chromium connect their own upstream account from the consent, after skipping it, and disconnect it from /account; the SDK agent's calls follow",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await Deno.mkdir(SHOTS, { recursive: true });
    const setup = await startPersonUpstream();
    const { ws, upstream } = setup;
    const authUrl = ws.server.authUrl;
    // A second business, so that the owner picks one.
    await ws.accounts.createBusiness(ws.ownerId, "Summit Bakery");
    const callbackPort = freePorts(1)[0]!;
    const callback = Deno.serve(
      { hostname: "127.0.0.1", port: callbackPort, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>Back in the agent</title><p>Done.</p>", {
          headers: { "Content-Type": "text/html" },
        }),
    );
    const redirectUrl = `http://127.0.0.1:${callbackPort}/callback`;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    const contexts: BrowserContext[] = [];
    const person = async () => {
      const context = await browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      return page;
    };
    const shot = (page: Page, name: string) => checkPage(page, name);
    // The upstream's own sign-in pages are not ours: only a picture of them.
    const picture = (page: Page, name: string) =>
      page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
    const heading = (page: Page) => page.locator("h1").innerText();
    const status = (page: Page) => page.locator("#connection-status").getAttribute("data-status");
    const connectLink = `${authUrl}/connections/crm?business=${ws.businessId}`;
    assert.equal(connectLink, connectPageUrl(ws));

    /** The newest sign-in mail to `email`, once the server has sent it. */
    const signInLink = async (email: string, before: number) =>
      (await until(`a sign-in mail to ${email}`, async () => {
        const mails = await setup.outbox.read();
        return mails.length > before && mails.filter((m) => m.to === email).at(-1);
      })).link;
    /** From the agent's authorization URL to the consent page, signing in by mail. */
    const signInAndConsent = async (page: Page, url: URL, email: string, prefix: string) => {
      await page.goto(url.href);
      assert.equal(new URL(page.url()).pathname, "/sign-in");
      await page.fill("#email", email);
      const before = (await setup.outbox.read()).length;
      await page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await page.waitForLoadState();
      await page.goto(await signInLink(email, before));
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForLoadState();
      if (await heading(page) === "Choose a business") {
        await shot(page, `${prefix}-choose-business`);
        await page.getByLabel("Acme Outdoor").check();
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForLoadState();
      }
      assert.match(await heading(page), /Allow access to Acme Outdoor\?/);
      for (const box of await page.locator("input[name=scope]:not([disabled])").all()) {
        await box.check();
      }
      await shot(page, `${prefix}-consent`);
      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL(/\/connections\/crm\?/);
    };
    /** At oidc-provider's own login and consent pages (devInteractions), as `login`. */
    const signInUpstream = async (page: Page, login: string, prefix: string) => {
      await page.waitForURL((url) => url.origin === new URL(upstream.issuer).origin);
      await page.locator("input[name=login]").fill(login);
      await page.locator("input[name=password]").fill("any");
      await picture(page, `${prefix}-upstream-login`);
      await page.getByRole("button", { name: "Sign-in" }).click();
      await page.waitForLoadState();
      await picture(page, `${prefix}-upstream-consent`);
      await page.getByRole("button", { name: "Continue" }).click();
    };

    const owner = agent(setup, redirectUrl);
    const member = agent(setup, redirectUrl);
    try {
      const ownerPage = await person();
      await t.step(
        "consent, then connect at the upstream's own pages, then back to the agent",
        async () => {
          const asked = await owner.ask("app.access upstream.crm");
          assert.equal(asked.searchParams.get("scope"), "app.access upstream.crm");
          await signInAndConsent(ownerPage, asked, "owner@example.com", "30-person");
          assert.equal(await heading(ownerPage), "Your Acme CRM account");
          assert.equal(await status(ownerPage), "none");
          await shot(ownerPage, "30-person-connect");
          await ownerPage.getByRole("button", { name: "Connect your Acme CRM account" }).click();
          await signInUpstream(ownerPage, "alice", "30-person");
          await ownerPage.waitForURL(/\/callback\?/);
          await owner.finish(ownerPage.url());
          assert.equal(owner.provider.tokens()?.scope, "app.access upstream.crm");
          assert.equal(upstream.seen.authorizationCode, 1);

          const names = await owner.toolNames();
          assert.ok(names.includes("crm__whoami"), names.join(", "));
          assert.deepEqual(await owner.whoami(), { isError: false, text: "alice" });
        },
      );

      await t.step(
        "Skip for now: the agent still gets its token, and its call carries the connect link",
        async () => {
          const memberPage = await person();
          await signInAndConsent(
            memberPage,
            await member.ask("app.access upstream.crm"),
            "member@example.com",
            "31-person-skip",
          );
          await shot(memberPage, "31-person-skip-connect");
          await memberPage.getByRole("button", { name: "Skip for now" }).click();
          await memberPage.waitForURL(/\/callback\?/);
          await member.finish(memberPage.url());
          assert.equal(member.provider.tokens()?.scope, "app.access upstream.crm");

          const refused = await member.whoami();
          assert.equal(refused.isError, true, refused.text);
          assert.ok(refused.text.includes(connectLink), refused.text);

          // Signed in and not connected yet, the link goes straight to the upstream's sign-in.
          await memberPage.goto(connectLink);
          await signInUpstream(memberPage, "bob", "31-person-skip");
          // The callback shows the connect page itself (no redirect after it).
          await memberPage.waitForURL(/\/connections\/callback\?/);
          assert.match(await memberPage.locator("#notice").innerText(), /^Connected:/);
          assert.equal(await status(memberPage), "connected");
          await shot(memberPage, "31-person-skip-connected");
          assert.deepEqual(await member.whoami(), { isError: false, text: "bob" });
        },
      );

      await t.step(
        "from /account the person disconnects: revoked upstream, and the agent is asked to connect",
        async () => {
          const revocations = upstream.seen.revocation;
          await ownerPage.goto(`${authUrl}/account`);
          const row = ownerPage.locator(
            `section[aria-labelledby="business-${ws.businessId}"] [data-upstream="crm"]`,
          );
          assert.equal(await row.getAttribute("data-status"), "connected");
          await shot(ownerPage, "32-person-account");
          await row.getByRole("link", { name: "Manage your Acme CRM connection" }).click();
          await ownerPage.waitForLoadState();
          assert.equal(ownerPage.url(), connectLink);
          assert.equal(await status(ownerPage), "connected");
          await ownerPage.getByRole("button", { name: "Disconnect" }).click();
          await ownerPage.waitForLoadState();
          assert.match(await ownerPage.locator("#notice").innerText(), /^Disconnected:/);
          assert.equal(await status(ownerPage), "none");
          await shot(ownerPage, "32-person-disconnected");
          assert.ok(upstream.seen.revocation > revocations, `${upstream.seen.revocation}`);

          const refused = await owner.whoami();
          assert.equal(refused.isError, true, refused.text);
          assert.ok(refused.text.includes(connectLink), refused.text);
          // The other person's connection is theirs alone.
          assert.deepEqual(await member.whoami(), { isError: false, text: "bob" });
        },
      );
    } finally {
      await owner.close();
      await member.close();
      for (const context of contexts) await context.close();
      await browser.close();
      await callback.shutdown();
      await setup.close();
    }
  },
});

Deno.test({
  name:
    "signed out in Chromium, a person follows a connect link through our sign-in to the upstream's own sign-in, and is connected",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const setup = await startPersonUpstream();
    const { ws, upstream } = setup;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      // Chromium says on the console when a CSP blocks a form's redirect.
      const violations: string[] = [];
      const blocked = Promise.withResolvers<void>();
      page.on("console", (message) => {
        if (!/Content Security Policy/.test(message.text())) return;
        violations.push(message.text());
        blocked.resolve();
      });
      // The link of an agent's tool error, or of a "reconnect your account" mail.
      await page.goto(connectPageUrl(ws));
      assert.equal(new URL(page.url()).pathname, "/sign-in");
      await page.fill("#email", "member@example.com");
      const before = (await setup.outbox.read()).length;
      await page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await page.waitForLoadState();
      const mail = await until("the sign-in mail", async () => {
        const mails = await setup.outbox.read();
        return mails.length > before && mails.at(-1);
      });
      const confirmation = await page.goto(mail.link);
      // Only this page's form may lead on to the upstream's sign-in (its authorization origin).
      const csp = confirmation!.headers()["content-security-policy"] ?? "";
      assert.equal(/form-action ([^;]*)/.exec(csp)?.[1], `'self' ${upstream.issuer}`);
      await page.getByRole("button", { name: "Sign in" }).click();
      // Our sign-in, then the connect link, then the upstream's own sign-in page: unless the
      // confirmation's form-action stops the redirects on the way.
      const reached = page.waitForURL((url) => url.origin === new URL(upstream.issuer).origin);
      reached.catch(() => {});
      await Promise.race([reached, blocked.promise]);
      assert.deepEqual(violations, []);
      await reached;
      await page.locator("input[name=login]").fill("bob");
      await page.locator("input[name=password]").fill("any");
      await page.getByRole("button", { name: "Sign-in" }).click();
      await page.waitForLoadState();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/connections\/callback\?/);
      assert.match(await page.locator("#notice").innerText(), /^Connected:/);
      assert.deepEqual(violations, []);
    } finally {
      await browser.close();
      await setup.close();
    }
  },
});
