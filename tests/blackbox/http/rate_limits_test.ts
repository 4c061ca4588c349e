// VESTIBULE_RATE_LIMITS overrides reach the endpoints they name, and only those.
import assert from "node:assert/strict";
import { startTestServer } from "../support/harness.ts";

Deno.test("configured rate limits replace the defaults of the endpoints they name", async () => {
  const server = await startTestServer({ VESTIBULE_RATE_LIMITS: "onboarding=2:2,registration=1" });
  const ping = () =>
    fetch(`${server.authUrl}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
  const register = () =>
    fetch(`${server.authUrl}/api/auth/oauth2/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "t", redirect_uris: ["http://127.0.0.1:9/cb"] }),
    });
  try {
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const response = await ping();
      await response.body?.cancel();
      statuses.push(response.status);
    }
    assert.deepEqual(statuses, [200, 200, 429]);
    const first = await register();
    await first.body?.cancel();
    assert.equal(first.status, 201);
    const second = await register();
    await second.body?.cancel();
    assert.equal(second.status, 429);
    assert.ok(second.headers.get("Retry-After"));
  } finally {
    await server.close();
  }
});
