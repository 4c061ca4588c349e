// Browser-based MCP clients (the official SDK, hence the MCP Inspector) send
// MCP-Protocol-Version when they fetch the discovery documents, so the browser preflights
// them. Every credential-free document must accept that preflight.
import assert from "node:assert/strict";
import { metadataPaths } from "../../../src/oauth/metadata.ts";
import { startTestServer } from "../support/harness.ts";

const ORIGIN = "https://inspector.example";

/**
 * What a browser decides for a request without credentials (Fetch standard, CORS-preflight
 * fetch): an ok status, the origin allowed, and each requested header listed or covered by
 * the `*` wildcard, which never covers Authorization.
 */
function browserAccepts(preflight: Response, headers: readonly string[]): boolean {
  const allowOrigin = preflight.headers.get("Access-Control-Allow-Origin");
  const allowed = (preflight.headers.get("Access-Control-Allow-Headers") ?? "")
    .split(",").map((name) => name.trim().toLowerCase());
  return preflight.ok && (allowOrigin === "*" || allowOrigin === ORIGIN) &&
    headers.every((name) =>
      allowed.includes(name) || (allowed.includes("*") && name !== "authorization")
    );
}

Deno.test("browsers may preflight every discovery document with MCP-Protocol-Version", async (t) => {
  const server = await startTestServer();
  try {
    const documents = [
      ...metadataPaths(server.config).map((path) => `${server.authUrl}${path}`),
      `${server.authUrl}/api/auth/jwks`,
      `${server.apiUrl}/.well-known/oauth-protected-resource`,
      `${server.baseUrl}/llms.txt`,
      `${server.baseUrl}/index.json`,
    ];
    for (const url of documents) {
      await t.step(new URL(url).pathname, async () => {
        for (const requested of ["mcp-protocol-version", "mcp-protocol-version,x-client-name"]) {
          const preflight = await fetch(url, {
            method: "OPTIONS",
            headers: {
              Origin: ORIGIN,
              "Access-Control-Request-Method": "GET",
              "Access-Control-Request-Headers": requested,
            },
          });
          await preflight.body?.cancel();
          assert.equal(preflight.status, 204);
          assert.ok(
            browserAccepts(preflight, requested.split(",")),
            `${requested}: Access-Control-Allow-Headers: ${
              preflight.headers.get("Access-Control-Allow-Headers")
            }`,
          );
          assert.equal(preflight.headers.get("Access-Control-Allow-Credentials"), null);
        }
        const get = await fetch(url, {
          headers: { Origin: ORIGIN, "MCP-Protocol-Version": "2025-11-25" },
        });
        await get.body?.cancel();
        assert.equal(get.status, 200);
        assert.equal(get.headers.get("Access-Control-Allow-Origin"), "*");
      });
    }
  } finally {
    await server.close();
  }
});
