// An upstream that refuses a call for want of a scope (RFC 6750 §3.1, MCP's scope challenge):
// 403 with a Bearer `insufficient_scope` challenge and an OAuth error body. The client reads the
// challenge, not the body: an error of its own kind carrying the scopes, only well-formed ones.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { UpstreamError } from "../../src/gateway/mcp_client.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";

/** Answers the 2025 handshake, then every call with `refusal`. */
function serve(refusal: () => Response) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 200 });
    const body = await request.json();
    if (body.method === "initialize") {
      return Response.json({
        jsonrpc: "2.0",
        id: body.id,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "scoped", version: "0" },
        },
      });
    }
    if (body.id === undefined || body.method === "server/discover") {
      return new Response(null, { status: body.id === undefined ? 202 : 404 });
    }
    return refusal();
  });
  const config = upstreamConfig(
    { kind: "http", url: `http://127.0.0.1:${server.addr.port}/mcp`, headers: {} },
    { name: "scoped", title: "Scoped" },
  );
  return { client: createMcpClient(config, { log: () => {} }), server };
}

Deno.test("a 403 insufficient_scope challenge is an insufficient_scope error with the scopes it asks for", async () => {
  const { client, server } = serve(() =>
    Response.json({ error: "insufficient_scope" }, {
      status: 403,
      headers: {
        "WWW-Authenticate":
          'Bearer error="insufficient_scope", scope="files:write files:read \u00e9t\u00e9", ' +
          'resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", ' +
          'error_description="File write permission required"',
      },
    })
  );
  try {
    await assert.rejects(client.callTool("write", {}), (error) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.kind, "insufficient_scope");
      assert.deepEqual(error.requiredScopes, ["files:write", "files:read"]);
      assert.equal(
        error.message,
        "Scoped refused tools/call: its sign-in lacks a permission the call needs " +
          "(files:write files:read) (HTTP 403 insufficient_scope)",
      );
      return true;
    });
  } finally {
    await client.close();
    await server.shutdown();
  }
});

Deno.test("a 403 without a scope challenge is no scope error", async () => {
  const { client, server } = serve(() =>
    Response.json({ error: "forbidden" }, {
      status: 403,
      headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' },
    })
  );
  try {
    await assert.rejects(
      client.callTool("write", {}),
      (error) => error instanceof UpstreamError && error.kind !== "insufficient_scope",
    );
  } finally {
    await client.close();
    await server.shutdown();
  }
});
