// The developer page on a phone (375 px): no code block runs or hides anything past the right
// edge, and the table of contents leads to each section.
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { startTestServer } from "../blackbox/support/harness.ts";
import { CHROMIUM, chromiumAvailable, SHOTS } from "./chromium.ts";

const available = chromiumAvailable("the developer page browser test");

Deno.test({
  name:
    "the developer page reads on a 375 px phone: code wraps inside its block, the contents link to every section",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startTestServer();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 375, height: 812 } });
      await page.goto(`${server.baseUrl}/developers`);
      await Deno.mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: `${SHOTS}developers-375.png`, fullPage: true });
      const layout = {
        viewport: await page.$eval("html", (root) => root.clientWidth),
        blocks: await page.$$eval("pre", (blocks) =>
          blocks.map((pre) => {
            const box = pre.getBoundingClientRect();
            return {
              right: Math.round(box.right),
              left: Math.round(box.left),
              hidden: pre.scrollWidth - pre.clientWidth,
            };
          })),
      };
      assert.ok(layout.blocks.length > 0, "the page has code blocks");
      for (const [i, block] of layout.blocks.entries()) {
        assert.ok(block.left >= 0 && block.right <= layout.viewport, `pre ${i}: ${block.right}`);
        // What scrolls is hidden on a phone, where no scroll bar shows: the code wraps instead.
        assert.equal(block.hidden, 0, `pre ${i} hides ${block.hidden} px past its right edge`);
      }

      const toc = await page.$$eval(
        'nav[aria-label="On this page"] a',
        (links) => links.map((a) => a.getAttribute("href")),
      );
      assert.ok(toc.length >= 4, `${toc.length} entries`);
      for (const href of toc) {
        assert.match(href!, /^#[a-z0-9-]+$/);
        assert.equal(await page.locator(href!).count(), 1, href!);
      }
      // A section with enough page below it to come to the top.
      const target = toc[1]!;
      await page.click(`nav[aria-label="On this page"] a[href="${target}"]`);
      assert.equal(new URL(page.url()).hash, target);
      const top = await page.locator(target).evaluate((h) => h.getBoundingClientRect().top);
      assert.ok(Math.abs(top) < 5, `the section heading is at the top (${top})`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
