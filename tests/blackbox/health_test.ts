import assert from "node:assert/strict";
import { startTestServer } from "./harness.ts";

Deno.test("health answers exactly ok:true service:www", async () => {
  const server = await startTestServer();
  try {
    const response = await fetch(`${server.baseUrl}/health`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Cache-Control"), "no-store");
    assert.equal(await response.text(), '{"ok":true,"service":"www"}');
  } finally {
    await server.close();
  }
});
