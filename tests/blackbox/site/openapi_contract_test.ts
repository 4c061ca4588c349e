// What the server sends matches the schemas /openapi.json publishes for it (the same valibot
// schemas the description is generated from), on every host the description names.
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  DiscoverRequestSchema,
  DiscoverResultSchema,
  InitializeResultSchema,
  ListToolsResponseSchema,
  ModernListToolsRequestSchema,
  RpcErrorSchema,
} from "../../../src/mcp/messages.ts";
import { OAuthErrorSchema, ProtectedResourceSchema } from "../../../src/oauth/wire_schemas.ts";
import { PageDocumentSchema } from "../../../src/pages/page_document.ts";
import { HealthSchema } from "../../../src/content/health.ts";
import { startTestServer } from "../support/harness.ts";
import { listEveryTool, toolsList } from "../../mcp/wire.ts";

function valid(schema: v.GenericSchema, value: unknown, what: string) {
  const result = v.safeParse(schema, value);
  assert.ok(result.success, `${what}: ${JSON.stringify(result.issues?.[0])}`);
}

Deno.test("responses match the schemas of the OpenAPI description", async (t) => {
  const server = await startTestServer({ VESTIBULE_MCP_PAGE_SIZE: "2" });
  const mcpHeaders = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  };
  const rpc = async (url: string, body: unknown) => {
    const response = await fetch(url, {
      method: "POST",
      headers: mcpHeaders,
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, json: await response.json() };
  };
  try {
    await t.step("Health, PageDocument, ProtectedResource", async () => {
      valid(HealthSchema, await (await fetch(`${server.baseUrl}/health`)).json(), "health");
      for (const path of ["/index.json", "/developers.json"]) {
        valid(PageDocumentSchema, await (await fetch(`${server.baseUrl}${path}`)).json(), path);
      }
      const metadata = await (await fetch(
        `${server.apiUrl}/.well-known/oauth-protected-resource`,
      )).json();
      valid(ProtectedResourceSchema, metadata, "protected resource");
      assert.equal(metadata.resource, server.apiUrl);
    });

    await t.step("onboarding: initialize, then ListToolsResponse pages to the end", async () => {
      const url = `${server.authUrl}/mcp`;
      const init = await rpc(url, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "contract", version: "1" },
        },
      });
      valid(InitializeResultSchema, init.json.result, "initialize result");
      const { tools } = await listEveryTool(async (cursor) => {
        const page = await rpc(url, toolsList(cursor, 2));
        assert.equal(page.status, 200);
        valid(ListToolsResponseSchema, page.json, "tools/list page");
        return page.json.result;
      });
      const names = tools.map((tool) => tool.name);
      assert.ok(names.length > 2, "more than one page was followed");
      assert.equal(new Set(names).size, names.length);
    });

    await t.step("2026-07-28: DiscoverResponse, then ListToolsResponse pages", async () => {
      const url = `${server.authUrl}/mcp`;
      const _meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      };
      const send = async (schema: v.GenericSchema, body: { method: string }) => {
        valid(schema, body, `${body.method} request`);
        const response = await fetch(url, {
          method: "POST",
          headers: {
            ...mcpHeaders,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": body.method,
          },
          body: JSON.stringify(body),
        });
        assert.equal(response.status, 200);
        return await response.json();
      };
      const discover = { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } };
      valid(DiscoverResultSchema, (await send(DiscoverRequestSchema, discover)).result, "discover");
      const { pages } = await listEveryTool(async (cursor) => {
        const params = { _meta, ...(cursor ? { cursor } : {}) };
        const page = await send(ModernListToolsRequestSchema, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/list",
          params,
        } as { method: string });
        valid(ListToolsResponseSchema, page, "tools/list page");
        assert.equal(page.result.resultType, "complete");
        return page.result;
      });
      assert.ok(pages > 1, "more than one page was followed");
    });

    await t.step("a forged cursor is an RpcError on a 200", async () => {
      const answer = await rpc(`${server.authUrl}/mcp`, {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/list",
        params: { cursor: "forged" },
      });
      assert.equal(answer.status, 200);
      valid(RpcErrorSchema, answer.json, "rpc error");
      assert.equal(answer.json.error.code, -32602);
    });

    await t.step("workspace without a token: 401, WWW-Authenticate, OAuthError", async () => {
      const answer = await rpc(`${server.apiUrl}/api/mcp`, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
      });
      assert.equal(answer.status, 401);
      assert.match(
        answer.headers.get("WWW-Authenticate") ?? "",
        /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource"/,
      );
      valid(OAuthErrorSchema, answer.json, "oauth error");
    });
  } finally {
    await server.close();
  }
});
