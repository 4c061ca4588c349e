// The person in Chromium, the agent the official MCP SDK v1 client (1.32.2, registered with
// refresh_token, unmodified): the first consent, then a step-up consent for each upstream, each
// answered by clicking the primary button as the page presents it. The step-up consent page is
// checked with axe-core and saved at desktop and phone width (tests/screenshots/).
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { freePorts } from "../../testkit/ports.ts";
import { journeyFixture, sumOf } from "../interop/journey_support.ts";
import { MemoryProvider } from "../interop/memory_provider.ts";
import { CHROMIUM, chromiumAvailable } from "./chromium.ts";
import { checkPage } from "./page_check.ts";

Deno.test({
  name: "in Chromium, the person answers the SDK v1 client's step-ups as presented",
  ignore: !chromiumAvailable("the step-up browser test"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const j = await journeyFixture();
    const port = freePorts(1)[0]!;
    const callback = Deno.serve(
      { hostname: "127.0.0.1", port, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>Back in the app</title><p>Done.</p>", {
          headers: { "Content-Type": "text/html" },
        }),
    );
    const provider = new MemoryProvider(`http://127.0.0.1:${port}/callback`, [
      "authorization_code",
      "refresh_token",
    ]);
    const userDataDir = await Deno.makeTempDir({ prefix: "vestibule-chromium-" });
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    // The person is signed in: the journey's browser session, handed to Chromium.
    await context.addCookies(
      [...j.human.cookies].map(([name, value]) => ({ name, value, url: j.fx.auth })),
    );
    const page = context.pages()[0] ?? await context.newPage();
    const connect = () => ({
      client: new Client({ name: "vestibule-step-up-browser", version: "1.0.0" }),
      transport: new StreamableHTTPClientTransport(j.mcpUrl, { authProvider: provider }),
    });
    let { client, transport } = connect();
    let consents = 0;
    /** The person opens the link the agent gives, and clicks the primary button. */
    const authorize = async (shot?: string) => {
      await page.goto(provider.authorizationUrls.at(-1)!.href);
      consents++;
      if (shot) await checkPage(page, shot);
      await page.locator('button.primary[name="decision"]').click();
      await page.waitForURL(/\/callback\?/);
      await transport.finishAuth(new URL(page.url()).searchParams.get("code")!);
    };
    const callGranting = async (name: string, shot?: string) => {
      try {
        return await client.callTool({ name, arguments: { a: 40, b: 2 } });
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        await authorize(shot);
        return await client.callTool({ name, arguments: { a: 40, b: 2 } });
      }
    };
    try {
      await t.step("the first consent grants app.access alone", async () => {
        await assert.rejects(client.connect(transport), UnauthorizedError);
        await authorize();
        assert.equal(provider.tokens()?.scope, "app.access");
        ({ client, transport } = connect());
        await client.connect(transport);
      });

      await t.step(
        "the step-up consent names upstream.alpha, ticked; app.access is kept",
        async () => {
          assert.equal(sumOf(await callGranting("alpha__add", "step-up-consent")), 42);
          assert.equal(provider.tokens()?.scope, "app.access upstream.alpha");
        },
      );

      await t.step("a second step-up for beta keeps alpha; alpha again asks nothing", async () => {
        await page.goto("about:blank");
        assert.equal(sumOf(await callGranting("beta__add")), 42);
        assert.equal(provider.tokens()?.scope, "app.access upstream.alpha upstream.beta");
        assert.equal(sumOf(await callGranting("alpha__add")), 42);
        assert.equal(consents, 3);
      });
    } finally {
      await client.close();
      await context.close();
      await Deno.remove(userDataDir, { recursive: true });
      await callback.shutdown();
      await j.close();
    }
  },
});
