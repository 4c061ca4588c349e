// A store that fails (a disk error, a lock held past every retry) costs the requests that need
// it a bare 500, or an MCP internal error, and nothing else: the process keeps serving.
import assert from "node:assert/strict";
import type { StoreFault } from "../../../testkit/store_faults.ts";
import { startTestServer } from "../support/harness.ts";
import { rpc } from "../support/mcp_helpers.ts";

/** Every store operation fails, as a locked database's do. */
const LOCKED: StoreFault = { error: { name: "TypeError", message: "database is locked" } };

for (const mode of ["json", "sse"]) {
  Deno.test(`a failing store costs only the requests that need it (MCP ${mode})`, async () => {
    const server = await startTestServer({ VESTIBULE_MCP_RESPONSE: mode });
    try {
      await server.setStoreFault(LOCKED);
      const register = () =>
        fetch(`${server.authUrl}/api/auth/oauth2/register`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ redirect_uris: ["http://127.0.0.1/cb"], client_name: "T" }),
        });
      const registered = await register();
      assert.equal(registered.status, 500);
      assert.equal(await registered.text(), "Internal server error\n");
      const signUp = await rpc(`${server.authUrl}/mcp`, {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: {
          name: "request_sign_up",
          arguments: {
            email: "owner@example.com",
            businessName: "Owner Co",
            accountHolderAuthorized: true,
          },
        },
      });
      assert.deepEqual(signUp, {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32603, message: "Internal error" },
      });
      const health = await fetch(`${server.baseUrl}/health`);
      assert.equal(health.status, 200);
      await health.body?.cancel();

      await server.setStoreFault(null);
      const again = await register();
      assert.equal(again.status, 201, await again.text());
      // One line for each failed request, naming the error (with its stack, for the operator)
      // and nothing of the request.
      const errors = server.logs.map((line) => JSON.parse(line))
        .filter((line) => line.level === "error" && line.message !== undefined);
      assert.deepEqual(errors.map(({ stack: _, time: _t, id: _i, ...rest }) => rest), [
        { level: "error", message: "unhandled", error: "TypeError: database is locked" },
        {
          level: "error",
          message: "MCP request failed",
          method: "tools/call",
          error: "TypeError: database is locked",
        },
      ]);
      for (const line of errors) assert.match(line.stack, /^TypeError: database is locked\n/);
    } finally {
      await server.close();
    }
  });
}
