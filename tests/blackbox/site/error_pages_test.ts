// Dead ends over real sockets: a browser gets a page that says what happened and where to go,
// other clients a plain answer, and an MCP client at a near-miss path the right endpoint.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { startTestServer } from "../support/harness.ts";

/** What Chromium sends when a person opens a link. */
const BROWSER = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

Deno.test("error pages and near-miss MCP paths", async (t) => {
  const server = await startTestServer();
  const { baseUrl: base, authUrl: auth, apiUrl: api } = server;
  const expectedMessage =
    `No MCP endpoint here: the workspace endpoint is ${api}/api/mcp (the onboarding one is ${auth}/mcp)`;
  try {
    await t.step("a browser at an unknown path gets a 404 page in the site's frame", async () => {
      const cases = [
        { origin: base, frame: /<nav aria-label="Site">/, next: `href="${auth}/sign-in"` },
        { origin: auth, frame: /<a href="\/account">Vestibule<\/a>/, next: 'href="/sign-in"' },
      ];
      for (const c of cases) {
        const response = await fetch(`${c.origin}/no-such-page`, { headers: BROWSER });
        const text = await response.text();
        assert.equal(response.status, 404, c.origin);
        assert.equal(response.headers.get("Content-Type"), "text/html; charset=utf-8");
        assert.equal(response.headers.get("Cache-Control"), "no-store");
        assert.match(response.headers.get("Content-Security-Policy")!, /default-src 'none'/);
        assert.match(text, /<h1>Page not found<\/h1>/);
        assert.match(text, /There is no page at <code>\/no-such-page<\/code>/);
        assert.match(text, c.frame, c.origin);
        assert.ok(text.includes(c.next), `${c.origin} says where to go next`);
        assert.ok(text.includes(`href="${base}/developers"`), c.origin);
      }
    });

    await t.step("the path in the page is escaped", async () => {
      const response = await fetch(`${base}/%3Cscript%3E`, { headers: BROWSER });
      const text = await response.text();
      assert.equal(response.status, 404);
      assert.ok(!text.includes("<script>"));
    });

    await t.step("a browser sending the wrong method gets a 405 page with Allow", async () => {
      const cases = [
        { url: `${base}/developers`, allow: "GET, HEAD, OPTIONS" },
        { url: `${auth}/agents`, allow: "GET, HEAD, OPTIONS" },
      ];
      for (const c of cases) {
        const response = await fetch(c.url, { method: "POST", headers: BROWSER, body: "x=1" });
        const text = await response.text();
        assert.equal(response.status, 405, c.url);
        assert.equal(response.headers.get("Allow"), c.allow, c.url);
        assert.equal(response.headers.get("Content-Type"), "text/html; charset=utf-8");
        assert.equal(response.headers.get("Cache-Control"), "no-store");
        assert.match(text, /<h1>This page cannot be used that way<\/h1>/);
        assert.match(text, /does not take a POST request; open it in your browser instead/);
      }
    });

    await t.step("clients that do not ask for HTML keep the plain answers", async () => {
      for (const headers of [{}, { Accept: "*/*" }, { Accept: "application/json" }]) {
        for (const origin of [base, auth, api]) {
          const missing = await fetch(`${origin}/no-such-page`, { headers });
          assert.equal(missing.status, 404);
          assert.equal(missing.headers.get("Content-Type"), "text/plain; charset=utf-8");
          assert.equal(await missing.text(), "Not found\n");
        }
        const wrong = await fetch(`${base}/index.json`, { method: "PUT", headers, body: "x" });
        assert.equal(wrong.status, 405);
        assert.equal(wrong.headers.get("Allow"), "GET, HEAD, OPTIONS");
        assert.equal(await wrong.text(), "Method not allowed\n");
      }
      const refused = await fetch(`${base}/nope`, { headers: { Accept: "text/html;q=0, */*" } });
      assert.equal(await refused.text(), "Not found\n", "q=0 refuses HTML");
    });

    await t.step("the {api_url} origin has no pages: plain text even for a browser", async () => {
      const response = await fetch(`${api}/no-such-page`, { headers: BROWSER });
      assert.equal(response.status, 404);
      assert.equal(await response.text(), "Not found\n");
    });

    await t.step("a used or unknown sign-in link is 410 Gone, with a way on", async () => {
      const response = await fetch(`${auth}/sign-in/verify?token=unknown`, { headers: BROWSER });
      const text = await response.text();
      assert.equal(response.status, 410);
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      assert.match(text, /expired or has already been used/);
      assert.match(text, /<a href="\/sign-in">Ask for a new sign-in link<\/a>/);
    });

    await t.step("the MCP endpoints keep their JSON-RPC 405", async () => {
      for (const url of [`${auth}/mcp`, `${api}/api/mcp`]) {
        const response = await fetch(url, { headers: BROWSER });
        assert.equal(response.status, 405, url);
        assert.equal(response.headers.get("Content-Type"), "application/json");
        assert.match((await response.json()).error.message, /use POST/);
      }
    });

    await t.step("a near-miss MCP path is a JSON-RPC 404 naming both endpoints", async () => {
      const nearMisses = [
        `${api}/mcp`,
        `${api}/api/mcp/`,
        `${api}/API/MCP`,
        `${api}/sse`,
        `${base}/api/mcp`,
        `${base}/mcp`,
        `${auth}/mcp/`,
        `${auth}/api/mcp`,
        `${auth}/Mcp`,
      ];
      for (const url of nearMisses) {
        for (const method of ["POST", "GET"]) {
          const response = await fetch(url, {
            method,
            headers: {
              "Content-Type": "application/json",
              Accept: "application/json, text/event-stream",
            },
            ...(method === "POST"
              ? { body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' }
              : {}),
          });
          assert.equal(response.status, 404, `${method} ${url}`);
          assert.equal(response.headers.get("Content-Type"), "application/json");
          assert.deepEqual(await response.json(), {
            jsonrpc: "2.0",
            id: null,
            error: {
              code: -32600,
              message: expectedMessage,
              data: { workspaceEndpoint: `${api}/api/mcp`, onboardingEndpoint: `${auth}/mcp` },
            },
          }, `${method} ${url}`);
        }
      }
    });

    await t.step(
      "the official MCP SDK client at a wrong URL shows the right endpoint",
      async () => {
        for (const url of [`${api}/mcp`, `${base}/api/mcp`, `${api}/api/mcp/`]) {
          const client = new Client({ name: "near-miss", version: "1.0.0" });
          const transport = new StreamableHTTPClientTransport(new URL(url));
          await assert.rejects(client.connect(transport), (error: Error) => {
            assert.equal((error as Error & { code?: number }).code, 404, url);
            assert.ok(error.message.includes(`the workspace endpoint is ${api}/api/mcp`), url);
            assert.ok(error.message.includes(`the onboarding one is ${auth}/mcp`), url);
            return true;
          });
          await client.close();
        }
      },
    );
  } finally {
    await server.close();
  }
});
