// Request bodies that end early, over real sockets: the client's problem, never a 500 or an
// error line, on every endpoint that reads a body before anything else.
import assert from "node:assert/strict";
import { Browser, signUpThroughForms, tempOutbox } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { rawExchange } from "../support/mcp_helpers.ts";

const FORM = "Content-Type: application/x-www-form-urlencoded\r\n";

/** Each endpoint's headers (so the body is what it reads next) and its kind of error body. */
const ENDPOINTS: readonly [path: string, headers: string, body: RegExp][] = [
  [
    "/mcp",
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
    "MCP-Protocol-Version: 2025-11-25\r\n",
    /"jsonrpc":"2.0","id":null,"error":\{"code":-32000/,
  ],
  ["/api/auth/oauth2/token", FORM, /"error":"invalid_request"/],
  ["/api/auth/oauth2/revoke", FORM, /"error":"invalid_request"/],
  ["/api/auth/oauth2/register", "Content-Type: application/json\r\n", /"invalid_client_metadata"/],
  ["/api/auth/oauth2/consent", FORM, /<html/],
  ["/sign-in", FORM, /<html/],
  ["/sign-up", FORM, /<html/],
];

const FRAMINGS: readonly [name: string, header: string, sent: string][] = [
  // The report: Content-Length 1000, six bytes sent, then the client stops.
  ["Content-Length 1000 with 6 bytes", "Content-Length: 1000\r\n", "email="],
  ["a chunked body without its last chunk", "Transfer-Encoding: chunked\r\n", "6\r\nemail=\r\n"],
];

Deno.test("a request body cut short is 400 and logs no error, on every endpoint", async (t) => {
  const server = await startTestServer({ VESTIBULE_RATE_LIMITS: "off" });
  try {
    const { host } = new URL(server.authUrl);
    for (const [path, headers, body] of ENDPOINTS) {
      for (const [framing, length, sent] of FRAMINGS) {
        await t.step(`${path}: ${framing}`, async () => {
          const logged = server.logs.length;
          const text = await rawExchange(server.authUrl, [
            `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n${headers}${length}\r\n${sent}`,
          ], { closeWrite: true });
          assert.match(text, /^HTTP\/1\.1 400 /);
          assert.match(text, /\r\nconnection: close\r\n/i);
          assert.match(text, /Cannot read request body: it ended before it was complete/);
          assert.match(text, body);
          const lines = server.logs.slice(logged).map((line) => JSON.parse(line));
          assert.deepEqual(lines.map((line) => [line.level, line.path, line.status]), [
            ["info", path, 400],
          ]);
        });
      }
    }
    await t.step("the server keeps answering", async () => {
      const response = await fetch(`${server.baseUrl}/health`);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    });
  } finally {
    await server.close();
  }
});

Deno.test("a form body over the cap is a 413 page with Connection: close, on every form", async (t) => {
  const outbox = await tempOutbox();
  const server = await startTestServer({
    VESTIBULE_RATE_LIMITS: "off",
    VESTIBULE_MAIL: outbox.env,
  });
  try {
    const browser = new Browser();
    await signUpThroughForms(browser, server.authUrl, outbox, "owner@example.com", "Acme");
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    for (
      const path of [
        "/api/auth/oauth2/consent",
        "/approvals/00000000-0000-0000-0000-000000000000",
        "/account",
        "/sign-in",
        "/sign-up",
        "/sign-in/verify",
        "/sign-out",
      ]
    ) {
      await t.step(path, async () => {
        const response = await fetch(`${server.authUrl}${path}`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie },
          body: `csrf=${"a".repeat(9000)}`,
          redirect: "manual",
        });
        assert.equal(response.status, 413);
        assert.equal(response.headers.get("Connection"), "close");
        assert.equal(response.headers.get("Cache-Control"), "no-store");
        assert.match(await response.text(), /Cannot read request body: exceeds 8192 bytes/);
      });
    }
  } finally {
    await server.close();
  }
});
