// A real browser (Debian's chromium through playwright-core) on another origin fetches the
// discovery documents the way the official MCP SDK does in a browser-based client such as
// the MCP Inspector: with the MCP-Protocol-Version header, hence after a CORS preflight.
import assert from "node:assert/strict";
import { chromium } from "npm:playwright-core@^1.56.0";
import { metadataPaths } from "../../src/oauth/metadata.ts";
import { startTestServer } from "../blackbox/support/harness.ts";
import { CHROMIUM, chromiumAvailable } from "./chromium.ts";

const available = chromiumAvailable("the browser CORS test");

Deno.test({
  name: "a browser on another origin reads every discovery document with MCP-Protocol-Version",
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
      const page = await browser.newPage();
      // {base_url} is another origin than {auth_url} and {api_url} (other ports).
      await page.goto(`${server.baseUrl}/health`);
      const urls = [
        ...metadataPaths(server.config).map((path) => `${server.authUrl}${path}`),
        `${server.authUrl}/api/auth/jwks`,
        `${server.apiUrl}/.well-known/oauth-protected-resource`,
      ];
      const outcomes = await page.evaluate(
        async (urls) =>
          await Promise.all(urls.map(async (url) => {
            try {
              const response = await fetch(url, {
                headers: { "MCP-Protocol-Version": "2025-11-25", Accept: "application/json" },
              });
              return `${url} ${response.status}`;
            } catch (error) {
              return `${url} ${String(error)}`;
            }
          })),
        urls,
      );
      assert.deepEqual(outcomes, urls.map((url) => `${url} 200`));
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
