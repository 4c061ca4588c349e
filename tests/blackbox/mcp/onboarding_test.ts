// The onboarding tools and the connection guide over real HTTP, in JSON and SSE modes.
import assert from "node:assert/strict";
import { SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { INITIALIZE, mcpPost, readMessages, rpc, withServer } from "../support/mcp_helpers.ts";
import { listEveryTool, toolsList } from "../../mcp/wire.ts";

const call = (mcp: string, name: string, args: Record<string, unknown> = {}) =>
  rpc(mcp, { jsonrpc: "2.0", id: name, method: "tools/call", params: { name, arguments: args } });

for (const mode of ["json", "sse"] as const) {
  Deno.test(`onboarding tools over HTTP (${mode})`, async (t) => {
    await withServer(
      { VESTIBULE_MCP_RESPONSE: mode, VESTIBULE_MCP_PAGE_SIZE: "1" },
      async (server, mcp) => {
        await t.step("answers use the configured media type", async () => {
          const response = await mcpPost(mcp, { jsonrpc: "2.0", id: 1, method: "ping" });
          assert.equal(
            response.headers.get("Content-Type"),
            mode === "json" ? "application/json" : "text/event-stream",
          );
          assert.deepEqual(await readMessages(response), [{ jsonrpc: "2.0", id: 1, result: {} }]);
        });

        await t.step(
          "stateless: no answer issues an Mcp-Session-Id, and none is needed",
          async () => {
            const answers = [
              await mcpPost(mcp, INITIALIZE, {}),
              await mcpPost(mcp, { jsonrpc: "2.0", method: "notifications/initialized" }),
              await mcpPost(mcp, { jsonrpc: "2.0", id: 1, method: "tools/list" }),
              // A call that streams its progress, in either mode.
              await mcpPost(mcp, {
                jsonrpc: "2.0",
                id: 2,
                method: "tools/call",
                params: {
                  name: "get_connection_guide",
                  arguments: { checkDiscovery: true },
                  _meta: { progressToken: 1 },
                },
              }),
              // One the server never issued (a client that spoke to a stateful server before).
              await mcpPost(mcp, { jsonrpc: "2.0", id: 3, method: "ping" }, {
                "MCP-Protocol-Version": "2025-11-25",
                "Mcp-Session-Id": "never-issued",
              }),
            ];
            for (const response of answers) {
              assert.ok([200, 202].includes(response.status), String(response.status));
              assert.equal(response.headers.get("Mcp-Session-Id"), null);
              if (response.status === 202) continue;
              const last = (await readMessages(response)).at(-1)!;
              assert.ok("result" in last, JSON.stringify(last));
            }
          },
        );

        await t.step("pagination followed to the end sees every tool once", async () => {
          const { tools, pages } = await listEveryTool(async (cursor) =>
            (await rpc(mcp, toolsList(cursor))).result
          );
          const names = tools.map((tool) => tool.name);
          assert.equal(pages, tools.length, "page size 1");
          assert.equal(new Set(names).size, names.length, "no tool seen twice");
          for (const name of ["get_connection_guide", "list_scopes", "describe_service"]) {
            assert.ok(names.includes(name), name);
          }
          for (const tool of tools) {
            assert.equal(tool.inputSchema.type, "object");
            assert.equal(tool.outputSchema.type, "object");
            assert.equal(typeof tool.title, "string");
            assert.equal(typeof tool.description, "string");
            for (
              const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
            ) {
              assert.equal(typeof tool.annotations[hint], "boolean", `${tool.name} ${hint}`);
            }
          }
        });

        await t.step("a forged cursor is -32602", async () => {
          const body = await rpc(mcp, {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/list",
            params: { cursor: "eyJvZmZzZXQiOjF9" },
          });
          assert.equal(body.error.code, -32602);
        });

        await t.step(
          "get_connection_guide gives the exact discovery URLs and a nextAction",
          async () => {
            const { result } = await call(mcp, "get_connection_guide");
            const guide = result.structuredContent;
            assert.equal(guide.workspaceMcpUrl, `${server.apiUrl}/api/mcp`);
            assert.equal(
              guide.protectedResourceMetadataUrl,
              `${server.apiUrl}/.well-known/oauth-protected-resource`,
            );
            assert.equal(
              guide.authorizationServerMetadataUrl,
              `${server.authUrl}/.well-known/oauth-authorization-server/api/auth`,
            );
            assert.equal(guide.initialScope, "app.access");
            assert.equal(guide.links.agents, `${server.authUrl}/agents`);
            assert.equal(guide.links.signUp, `${server.authUrl}/sign-up`);
            assert.equal(guide.nextAction.url, `${server.apiUrl}/api/mcp`);
            const steps = guide.steps.map((s: { text: string }) => s.text).join(" ");
            assert.match(steps, /signs? in/);
            // The revision a new client should use, with where both are shown.
            assert.match(steps, /MCP 2026-07-28, the version a new client should use/);
            assert.ok(steps.includes(`${server.baseUrl}/developers#mcp-2026`));
            assert.equal(result.content[0].type, "text");
            assert.equal(result.isError, undefined);
          },
        );

        await t.step("list_scopes lists every scope of spec §5", async () => {
          const { result } = await call(mcp, "list_scopes");
          const scopes = result.structuredContent.scopes;
          assert.deepEqual(scopes.map((s: { name: string }) => s.name), [...SUPPORTED_SCOPES]);
          const run = scopes.find((s: { name: string }) => s.name === "workflows.run");
          assert.equal(run.preparesHumanDecision, true);
          const read = scopes.find((s: { name: string }) => s.name === "members.read");
          assert.equal(read.preparesHumanDecision, false);
          assert.equal(result.structuredContent.initialScope, "app.access");
        });

        await t.step("describe_service says what is and is not offered", async () => {
          const { result } = await call(mcp, "describe_service");
          const service = result.structuredContent;
          assert.equal(service.endpoints.onboardingMcp, mcp);
          assert.ok(
            service.publicDocuments.some((d: { url: string }) =>
              d.url === `${server.baseUrl}/openapi.json`
            ),
          );
          assert.match(service.notOffered.join(" "), /sandbox/);
          assert.match(service.notOffered.join(" "), /API keys/);
        });

        await t.step(
          "invalid arguments are a tool result with isError naming the field",
          async () => {
            const { result } = await call(mcp, "get_connection_guide", {
              checkDiscovery: "yes",
              extra: 1,
            });
            assert.equal(result.isError, true);
            assert.match(result.content[0].text, /"checkDiscovery"/);
            assert.match(result.content[0].text, /"extra"/);
          },
        );

        await t.step("an unknown tool is -32602", async () => {
          const body = await call(mcp, "delete_everything");
          assert.equal(body.error.code, -32602);
          assert.match(body.error.message, /Unknown tool: "delete_everything"/);
        });

        await t.step("a progressToken streams genuine progress, then the result", async () => {
          const response = await mcpPost(mcp, {
            jsonrpc: "2.0",
            id: "p",
            method: "tools/call",
            params: {
              name: "get_connection_guide",
              arguments: { checkDiscovery: true },
              _meta: { progressToken: "guide-1" },
            },
          });
          assert.equal(response.status, 200);
          assert.equal(response.headers.get("Content-Type"), "text/event-stream");
          const messages = await readMessages(response);
          const progress = messages.filter((m) => m.method === "notifications/progress");
          assert.deepEqual(progress.map((m) => m.params.progress), [0, 1, 2, 3]);
          assert.ok(
            progress.every((m) => m.params.progressToken === "guide-1" && m.params.total === 3),
          );
          const last = messages.at(-1)!;
          assert.equal(last.id, "p");
          const discovery = last.result.structuredContent.discovery;
          assert.deepEqual(discovery.checks.map((c: { name: string }) => c.name), [
            "workspace MCP challenge",
            "protected-resource metadata",
            "authorization-server metadata",
          ]);
          assert.deepEqual(discovery.checks.map((c: { detail: string }) => c.detail), [
            "ok",
            "ok",
            "ok",
          ]);
          assert.equal(discovery.ok, true);
        });
      },
    );
  });
}

Deno.test("the connection guide is one source for /llms.txt, /agents and the tool", async () => {
  await withServer({}, async (server, mcp) => {
    const text = await fetch(`${server.authUrl}/llms.txt`);
    assert.equal(text.status, 200);
    assert.equal(text.headers.get("Content-Type"), "text/plain; charset=utf-8");
    const plain = await text.text();

    const page = await fetch(`${server.authUrl}/agents`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("Content-Type"), "text/html; charset=utf-8");
    assert.match(page.headers.get("Content-Security-Policy")!, /default-src 'none'/);
    const html = await page.text();
    assert.match(html, /<link rel="stylesheet" href="\/assets\/style\.css">/);
    assert.match(html, /<main>/);

    const { result } = await call(mcp, "get_connection_guide");
    assert.equal(result.content[0].text, plain, "the tool's text block is the llms.txt text");
    const guide = result.structuredContent;
    const urls = [
      guide.workspaceMcpUrl,
      guide.protectedResourceMetadataUrl,
      guide.authorizationServerMetadataUrl,
      guide.links.agents,
      guide.links.signUp,
    ];
    for (const url of urls) {
      assert.ok(plain.includes(url), `llms.txt names ${url}`);
      assert.ok(html.includes(url), `/agents names ${url}`);
    }
    for (const step of guide.steps) assert.ok(html.includes(step.title), step.title);

    const stylesheet = await fetch(`${server.authUrl}/assets/style.css`);
    assert.equal(stylesheet.status, 200);
    await stylesheet.body?.cancel();

    const revalidated = await fetch(`${server.authUrl}/llms.txt`, {
      headers: { "If-None-Match": text.headers.get("ETag")! },
    });
    assert.equal(revalidated.status, 304);
  });
});
