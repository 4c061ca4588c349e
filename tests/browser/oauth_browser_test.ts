// A real browser (Debian's chromium through playwright-core) goes through sign-up, sign-in,
// business selection and consent; each page is saved to tests/screenshots/.
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { createAccounts } from "../../src/accounts/accounts.ts";
import { freePorts } from "../../testkit/ports.ts";
import {
  authorizeParams,
  authorizeUrl,
  exchange,
  oauthFixture,
  registerClient,
} from "../blackbox/support/oauth_helpers.ts";
import { CHROMIUM, chromiumAvailable, SHOTS } from "./chromium.ts";
import { checkPage } from "./page_check.ts";

const available = chromiumAvailable("the browser test");

Deno.test({
  name: "a real browser signs up, signs in, picks a business and consents to what it ticks",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await Deno.mkdir(SHOTS, { recursive: true });
    const fx = await oauthFixture();
    const callbackPort = freePorts(1)[0]!;
    const callback = Deno.serve(
      { hostname: "127.0.0.1", port: callbackPort, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>Back in the app</title><p>Done.</p>", {
          headers: { "Content-Type": "text/html" },
        }),
    );
    const userDataDir = await Deno.makeTempDir({ prefix: "vestibule-chromium-" });
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    const page = context.pages()[0] ?? await context.newPage();
    const shot = (name: string) => checkPage(page, name);
    const openMail = async () => {
      const mail = (await fx.outbox.read()).at(-1)!;
      await page.goto(mail.link);
      await page.getByRole("button").first().click();
      await page.waitForLoadState();
    };
    try {
      const client = await registerClient(fx, {
        client_name: "Browser Agent",
        redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
      });

      await t.step("sign up twice: two businesses", async () => {
        for (const business of ["Harbour Café", "Hill Bakery"]) {
          await page.goto(`${fx.auth}/sign-up`);
          await page.fill("#email", "owner@example.com");
          await page.fill("#business", business);
          await shot(`01-sign-up-${business.startsWith("Harbour") ? "first" : "second"}`);
          await page.getByRole("button", { name: "Send me the link" }).click();
          await page.waitForLoadState();
          assert.match(await page.content(), /Check your e-mail/);
          await shot("02-check-mail");
          await openMail();
        }
        assert.match(await page.content(), /Hill Bakery/);
        await shot("03-account");
      });

      await t.step("signed out, the authorization request leads to sign-in and back", async () => {
        await context.clearCookies();
        const { params, verifier } = await authorizeParams(client, {
          scope: "app.access members.read billing.read",
        });
        await page.goto(authorizeUrl(fx, params));
        assert.equal(new URL(page.url()).pathname, "/sign-in");
        await page.fill("#email", "owner@example.com");
        await shot("04-sign-in");
        await page.getByRole("button", { name: "Send me a sign-in link" }).click();
        await page.waitForLoadState();
        const mail = (await fx.outbox.read()).at(-1)!;
        await page.goto(mail.link);
        await shot("05-confirm-sign-in");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForLoadState();

        assert.match(await page.content(), /Choose a business/);
        await shot("06-choose-business");
        await page.getByLabel(/Hill Bakery/).check();
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForLoadState();

        const consent = await page.content();
        assert.match(consent, /Allow access to Hill Bakery\?/);
        assert.match(consent, /Browser Agent/);
        // Least privilege: only app.access starts ticked; the human ticks members.read.
        assert.equal(await page.getByLabel(/app\.access/).isChecked(), true);
        assert.equal(await page.getByLabel(/members\.read/).isChecked(), false);
        assert.equal(await page.getByLabel(/billing\.read/).isChecked(), false);
        await page.getByLabel(/members\.read/).check();
        await shot("07-consent");
        await page.getByRole("button", { name: "Allow" }).click();
        await page.waitForURL(/\/callback\?/);
        // Not our page: only a picture of it.
        await page.screenshot({ path: `${SHOTS}08-back-in-the-app.png`, fullPage: true });

        const back = new URL(page.url());
        assert.equal(back.searchParams.get("state"), params.state);
        assert.equal(back.searchParams.get("iss"), fx.issuer);
        const { status, json } = await exchange(
          fx,
          client,
          back.searchParams.get("code")!,
          verifier,
        );
        assert.equal(status, 200, JSON.stringify(json));
        assert.equal(json.scope, "app.access members.read");
      });

      await t.step("a member is told an owner-only scope is not theirs to grant", async () => {
        const accounts = createAccounts(fx.server.store, fx.clock.now);
        const owner = await accounts.findAccountByEmail("owner@example.com");
        const hill = (await accounts.listBusinessesOf(owner!.id))
          .find((m) => m.business.name === "Hill Bakery")!;
        await accounts.addMember(hill.business.id, "clerk@example.com", "member");
        await context.clearCookies();
        const { params, verifier } = await authorizeParams(client, {
          scope: "app.access members.read billing.manage",
        });
        await page.goto(authorizeUrl(fx, params));
        await page.fill("#email", "clerk@example.com");
        await page.getByRole("button", { name: "Send me a sign-in link" }).click();
        await page.waitForLoadState();
        await openMail();

        const notice = page.locator("#owner-only-notice");
        assert.match(
          (await notice.innerText()).replace(/\s+/g, " "),
          /^Only an owner of Hill Bakery can allow billing\.manage\. You are a member, so this application cannot get it from you/,
        );
        const billing = page.getByLabel(/billing\.manage/);
        assert.equal(await billing.isDisabled(), true);
        const marks = page.locator("label[for=scope-billing-manage] .mark");
        assert.deepEqual(await marks.allInnerTexts(), ["owner only", "spends money"]);
        await shot("09-member-consent");
        await page.getByRole("button", { name: "Allow" }).click();
        await page.waitForURL(/\/callback\?/);
        const back = new URL(page.url());
        const { json } = await exchange(fx, client, back.searchParams.get("code")!, verifier);
        assert.equal(json.scope, "app.access", "only what the page started with");
      });
    } finally {
      await context.close();
      await callback.shutdown();
      await fx.close();
      await Deno.remove(userDataDir, { recursive: true });
    }
  },
});
