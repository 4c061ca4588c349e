// A real browser (Debian's chromium through playwright-core) on another origin does what a
// browser-based MCP client does with the discovery documents: reads the AI Catalog and each
// Server Card, reads their ETag (exposed by CORS), and revalidates with If-None-Match, a header
// that needs a preflight, getting 304.
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { startTestServer } from "../blackbox/support/harness.ts";
import { CHROMIUM, chromiumAvailable } from "./chromium.ts";

const available = chromiumAvailable("the browser Server Card test");

Deno.test({
  name: "a browser on another origin reads the catalog and the cards, their ETags, and gets 304",
  ignore: !available,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startTestServer();
    const elsewhere = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () =>
        new Response("<!doctype html><title>agent</title>", {
          headers: { "Content-Type": "text/html" },
        }),
    );
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    try {
      const page = await browser.newPage();
      // An agent's own page, on an origin none of Vestibule's.
      await page.goto(`http://127.0.0.1:${elsewhere.addr.port}/`);
      const outcomes = await page.evaluate(async (catalogUrl) => {
        const read = async (url: string, accept: string) => {
          const first = await fetch(url, { headers: { Accept: accept }, cache: "no-store" });
          const etag = first.headers.get("ETag");
          const body = await first.json();
          const again = await fetch(url, {
            headers: { Accept: accept, "If-None-Match": etag ?? "" },
            cache: "no-store",
          });
          return { body, line: `${first.status} ${etag !== null} ${again.status}` };
        };
        const catalog = await read(catalogUrl, "application/ai-catalog+json");
        const lines = [`${catalogUrl} ${catalog.line}`];
        for (const entry of catalog.body.entries) {
          const card = await read(entry.url, "application/mcp-server-card+json");
          lines.push(`${entry.url} ${card.line} ${card.body.name}`);
        }
        return lines;
      }, `${server.baseUrl}/.well-known/ai-catalog.json`);
      assert.deepEqual(outcomes, [
        `${server.baseUrl}/.well-known/ai-catalog.json 200 true 304`,
        `${server.authUrl}/mcp/server-card 200 true 304 127.0.0.1/onboarding`,
        `${server.apiUrl}/api/mcp/server-card 200 true 304 127.0.0.1/workspace`,
      ]);
    } finally {
      await browser.close();
      await elsewhere.shutdown();
      await server.close();
    }
  },
});
