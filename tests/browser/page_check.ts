// What every human page must pass in the browser tests, at a desktop and a phone width: no
// serious or critical finding of axe-core (an accessibility checker nobody here wrote, run in
// the page), nothing wider than a phone's screen, and a screenshot of each under
// tests/screenshots/ for a person to look at.
import assert from "node:assert/strict";
import axe from "npm:axe-core@4.14.1";
import type { Page } from "npm:playwright-core@^1.56.0";
import { SHOTS } from "./chromium.ts";

export const WIDTHS = [
  { label: "desktop", width: 1280, height: 800 },
  { label: "phone", width: 375, height: 740 },
] as const;

interface Finding {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly targets: readonly string[];
}

/**
 * Checks the page as it is now at both widths (then leaves it at the desktop width) and writes
 * `<name>-desktop.png` and `<name>-phone.png`.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await Deno.mkdir(SHOTS, { recursive: true });
  for (const { label, width, height } of [...WIDTHS].reverse()) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: `${SHOTS}${name}-${label}.png`, fullPage: true });
    // Evaluated through the browser's devtools protocol, which the pages' CSP does not govern.
    if (!await page.evaluate("typeof window.axe === 'object'")) await page.evaluate(axe.source);
    // In-page code as text: it runs in the browser, where `document` is.
    const findings = await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })
      .then((run) => run.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)),
      })))`) as Finding[];
    const bad = findings.filter((f) => f.impact === "serious" || f.impact === "critical");
    assert.deepEqual(bad, [], `${name} at ${label} width (${page.url()})`);
    const overflow = await page.evaluate(`(() => {
      const root = document.documentElement;
      if (root.scrollWidth <= root.clientWidth) return null;
      const wide = [...document.querySelectorAll("body *")].find((e) =>
        e.getBoundingClientRect().right > root.clientWidth + 1 &&
        getComputedStyle(e.parentElement).overflowX !== "auto");
      return root.scrollWidth + "px wide, e.g. <" + wide?.tagName.toLowerCase() + "> " +
        wide?.textContent?.slice(0, 60);
    })()`);
    assert.equal(overflow, null, `${name} at ${label} width is wider than the screen`);
  }
}

/** How many lines the label of each button reading `label` takes (a label that wraps: 2). */
export async function buttonLines(page: Page, label: string): Promise<number[]> {
  return await page.evaluate(`[...document.querySelectorAll(".button")]
    .filter((b) => b.textContent.trim() === ${JSON.stringify(label)})
    .map((b) => {
      const style = getComputedStyle(b);
      const inner = b.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
      return Math.round(inner / parseFloat(style.lineHeight));
    })`) as number[];
}
