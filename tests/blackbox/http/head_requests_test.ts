// HEAD on every GET route of the three origins: the GET's status and header fields,
// Content-Length included (RFC 9110 §9.3.2), and no body. Read on the wire, because Deno.serve
// frames a bodiless response itself and fetch would hide what it wrote.
import assert from "node:assert/strict";
import { metadataPaths } from "../../../src/oauth/metadata.ts";
import { Browser, signUpThroughForms, tempOutbox } from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { rawExchange } from "../support/mcp_helpers.ts";

interface WireAnswer {
  readonly fields: readonly string[];
  readonly body: string;
}

/** One request on its own connection; header fields sorted, `Date` and cookie values masked. */
async function onTheWire(
  origin: string,
  method: string,
  path: string,
  headers: readonly string[],
): Promise<WireAnswer> {
  const host = new URL(origin).host;
  const text = await rawExchange(origin, [
    [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...headers, "Connection: close", "", ""]
      .join("\r\n"),
  ]);
  const end = text.indexOf("\r\n\r\n");
  assert.ok(end > 0, `${method} ${path}: no complete answer: ${JSON.stringify(text)}`);
  const [status = "", ...lines] = text.slice(0, end).split("\r\n");
  const fields = lines
    .map((line) => line.replace(/^[^:]+/, (name) => name.toLowerCase()))
    .filter((line) => !line.startsWith("date:"))
    // A fresh CSRF cookie per request: its value differs, its presence and attributes do not.
    .map((line) => line.replace(/^(set-cookie: [^=]+=)[^;]*/, "$1…"))
    // Each request has its own id (src/http/request_log.ts): present on both, values differ.
    .map((line) => line.replace(/^(x-request-id: ).*/, "$1…"))
    .sort();
  return { fields: [status, ...fields], body: text.slice(end + 4) };
}

Deno.test("HEAD answers carry the GET's header fields, Content-Length included, on every GET route", async (t) => {
  const outbox = await tempOutbox();
  const server = await startTestServer({
    VESTIBULE_MAIL: outbox.env,
    VESTIBULE_RATE_LIMITS: "off",
  });
  try {
    const browser = new Browser();
    await signUpThroughForms(browser, server.authUrl, outbox, "head@example.com", "Head Ltd");
    const session = `Cookie: ${[...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")}`;
    const routes: Record<string, readonly string[]> = {
      base_url: [
        "/health",
        "/llms.txt",
        "/",
        "/index.json",
        "/index.md",
        "/developers",
        "/developers.json",
        "/developers.md",
        "/openapi.json",
        "/contact",
        "/privacy",
        "/terms",
        "/assets/style.css",
      ],
      auth_url: [
        "/llms.txt",
        "/agents",
        "/assets/style.css",
        "/sign-up",
        "/sign-in",
        "/sign-in/verify?token=unknown",
        "/sign-out",
        "/account",
        "/approvals",
        "/approvals/unknown",
        ...metadataPaths(server.config),
        "/api/auth/jwks",
        "/api/auth/oauth2/authorize",
      ],
      api_url: ["/.well-known/oauth-protected-resource"],
    };
    const variants: Record<string, readonly string[]> = {
      "plain": [],
      "gzip accepted": ["Accept-Encoding: gzip, br"],
      "signed in": [session],
    };
    const origins: Record<string, string> = {
      base_url: server.baseUrl,
      auth_url: server.authUrl,
      api_url: server.apiUrl,
    };
    for (const [name, paths] of Object.entries(routes)) {
      const origin = origins[name]!;
      for (const path of paths) {
        await t.step(`{${name}}${path}`, async () => {
          for (const [variant, headers] of Object.entries(variants)) {
            const get = await onTheWire(origin, "GET", path, headers);
            const head = await onTheWire(origin, "HEAD", path, headers);
            assert.deepEqual(head.fields, get.fields, `${variant}: the same fields`);
            assert.equal(head.body, "", `${variant}: no body`);
            const length = get.fields.find((f) => f.startsWith("content-length:"));
            if (length !== undefined && get.fields[0]!.includes(" 200 ")) {
              assert.notEqual(length, "content-length: 0", `${variant}: a 200 with a body`);
            }
          }
        });
      }
    }
  } finally {
    await server.close();
  }
});
