// Both MCP endpoints over real HTTP in MCP 2026-07-28 beside the 2025 revisions: discovery,
// caching hints, identity, deterministic listing, the removed methods and the metadata rules;
// a 2025 and a 2026 client on one endpoint at once; the transport rules both revisions share.
import assert from "node:assert/strict";
import { startTestServer } from "../support/harness.ts";
import {
  INITIALIZE,
  mcpPost,
  MODERN_META,
  modernRequest,
  rawExchange,
  readMessages,
} from "../support/mcp_helpers.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";
import { listEveryTool, toolsList } from "../../mcp/wire.ts";

interface Endpoint {
  readonly name: string;
  readonly url: string;
  /** What authentication the endpoint wants (a bearer token on the workspace). */
  readonly auth: Record<string, string>;
  readonly serverName: string;
  readonly cacheScope: "public" | "private";
  /** A tool every caller may call with no arguments. */
  readonly tool: string;
}

async function withEndpoints(
  env: Record<string, string>,
  fn: (endpoints: Endpoint[], token: (scopes: string[]) => Promise<string>) => Promise<void>,
) {
  const ws = await startWorkspaceServer(env);
  try {
    const token = async (scopes: string[]) => (await ws.token(scopes)).token;
    const bearer = await token(["app.access"]);
    await fn([
      {
        name: "onboarding",
        url: `${ws.server.authUrl}/mcp`,
        auth: {},
        serverName: "127.0.0.1/onboarding",
        cacheScope: "public",
        tool: "list_scopes",
      },
      {
        name: "workspace",
        url: `${ws.server.apiUrl}/api/mcp`,
        auth: { Authorization: `Bearer ${bearer}` },
        serverName: "127.0.0.1/workspace",
        cacheScope: "private",
        tool: "get_business",
      },
    ], token);
  } finally {
    await ws.close();
  }
}

/** POSTs a 2026-07-28 request; `headers` override the metadata headers. */
function modern(
  endpoint: Endpoint,
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; headers?: Record<string, string>; body?: unknown } = {},
) {
  const request = modernRequest(method, params, options.id ?? 1);
  return mcpPost(endpoint.url, options.body ?? request.body, {
    ...request.headers,
    ...endpoint.auth,
    ...options.headers,
  });
}

/** POSTs a 2025-11-25 request (the handshake happened before, or not: the server is stateless). */
function legacy(endpoint: Endpoint, body: unknown, version = "2025-11-25") {
  return mcpPost(endpoint.url, body, { "MCP-Protocol-Version": version, ...endpoint.auth });
}

async function json(response: Response, status = 200) {
  assert.equal(response.status, status);
  assert.equal(response.headers.get("Content-Type"), "application/json");
  return await response.json();
}

/** Every tool name, following nextCursor; each page passes through `check` first. */
async function toolNames(
  send: (cursor: string | undefined) => Promise<Response>,
  check: (result: Record<string, unknown>) => void,
): Promise<string[]> {
  const { tools } = await listEveryTool(async (cursor) => {
    const { result } = await json(await send(cursor));
    check(result);
    return result;
  });
  return tools.map((tool) => tool.name);
}

Deno.test("MCP 2026-07-28 on both endpoints over HTTP", async (t) => {
  await withEndpoints({ VESTIBULE_MCP_PAGE_SIZE: "2" }, async (endpoints) => {
    for (const e of endpoints) {
      const serverInfo = {
        name: e.serverName,
        title: e.serverName === "127.0.0.1/onboarding"
          ? "Vestibule onboarding"
          : "Vestibule workspace",
        version: "1.0.0",
        // The Server Card's words (src/mcp/servers.ts), checked there against the schema.
        description: e.serverName === "127.0.0.1/onboarding"
          ? "Public, no sign-in: how an agent connects to this business's workspace MCP."
          : "The business's tools, for an agent a person authorized with OAuth 2.1.",
      };

      await t.step(
        `${e.name}: server/discover names versions, capabilities and server`,
        async () => {
          const body = await json(await modern(e, "server/discover", {}, { id: "d" }));
          assert.equal(body.id, "d");
          assert.deepEqual(body.result, {
            resultType: "complete",
            supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
            // The workspace answers gated calls with tasks (src/mcp/tasks.ts).
            capabilities: e.serverName === "127.0.0.1/workspace"
              ? {
                tools: { listChanged: false },
                extensions: { "io.modelcontextprotocol/tasks": {} },
              }
              : { tools: { listChanged: false } },
            instructions: body.result.instructions,
            ttlMs: 300_000,
            cacheScope: e.cacheScope,
            _meta: { "io.modelcontextprotocol/serverInfo": serverInfo },
          });
          assert.match(body.result.instructions, /get_(connection_guide|agent_connection_setup)/);
        },
      );

      await t.step(
        `${e.name}: tools/list pages carry the 2026 fields, in the 2025 order`,
        async () => {
          let pages = 0;
          const modernNames = await toolNames(
            (cursor) => modern(e, "tools/list", cursor === undefined ? {} : { cursor }),
            (result) => {
              pages++;
              assert.equal(result.resultType, "complete");
              assert.equal(result.ttlMs, 300_000);
              assert.equal(result.cacheScope, e.cacheScope);
              assert.deepEqual(result._meta, { "io.modelcontextprotocol/serverInfo": serverInfo });
            },
          );
          const legacyNames = await toolNames(
            (cursor) => legacy(e, toolsList(cursor, 2)),
            (result) => {
              for (const key of ["resultType", "ttlMs", "cacheScope", "_meta"]) {
                assert.equal(key in result, false, `a 2025 page has no ${key}`);
              }
            },
          );
          assert.ok(pages >= 2, `${pages} page(s)`);
          assert.deepEqual(modernNames, legacyNames);
          assert.equal(new Set(modernNames).size, modernNames.length);
        },
      );

      await t.step(`${e.name}: a tool result carries resultType and serverInfo`, async () => {
        const body = await json(await modern(e, "tools/call", { name: e.tool, arguments: {} }));
        assert.equal(body.result.resultType, "complete");
        assert.deepEqual(body.result._meta, { "io.modelcontextprotocol/serverInfo": serverInfo });
        assert.notEqual(body.result.isError, true, JSON.stringify(body.result));
        assert.equal(typeof body.result.structuredContent, "object");
        assert.equal(body.result.content[0].type, "text");
      });

      await t.step(`${e.name}: initialize, ping and logging/setLevel are 404 -32601`, async () => {
        for (const method of ["initialize", "ping", "logging/setLevel"]) {
          const body = await json(await modern(e, method, {}, { id: `x-${method}` }), 404);
          assert.equal(body.id, `x-${method}`);
          assert.equal(body.error.code, -32601, method);
        }
      });

      const refusals: {
        name: string;
        send: () => Promise<Response>;
        code: number;
        message: RegExp;
      }[] = [
        {
          name: "a request without _meta",
          send: () =>
            modern(e, "tools/list", {}, {
              body: { jsonrpc: "2.0", id: 9, method: "tools/list", params: {} },
            }),
          code: -32602,
          message: /"params\._meta"/,
        },
        {
          name: "a _meta without client capabilities",
          send: () =>
            modern(e, "tools/list", {}, {
              body: {
                jsonrpc: "2.0",
                id: 9,
                method: "tools/list",
                params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
              },
            }),
          code: -32602,
          message: /clientCapabilities/,
        },
        {
          name: "an Mcp-Method that is not the body's method",
          send: () =>
            modern(e, "tools/list", {}, { id: 9, headers: { "Mcp-Method": "tools/call" } }),
          code: -32020,
          message: /Mcp-Method "tools\/call" does not match the method "tools\/list"/,
        },
        {
          name: "an Mcp-Name that is not the body's tool",
          send: () =>
            modern(e, "tools/call", { name: e.tool, arguments: {} }, {
              id: 9,
              headers: { "Mcp-Name": "something_else" },
            }),
          code: -32020,
          message: /Mcp-Name "something_else" does not match params.name/,
        },
        {
          name: "an MCP-Protocol-Version that is not the _meta version",
          send: () =>
            modern(e, "tools/list", {}, {
              id: 9,
              headers: { "MCP-Protocol-Version": "2025-11-25" },
            }),
          code: -32020,
          message: /"2025-11-25" does not match _meta/,
        },
        {
          name: "a version nobody speaks",
          send: () =>
            modern(e, "tools/list", {}, {
              id: 9,
              headers: { "MCP-Protocol-Version": "v999" },
              body: {
                jsonrpc: "2.0",
                id: 9,
                method: "tools/list",
                params: {
                  _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "v999" },
                },
              },
            }),
          code: -32022,
          message:
            /"v999" is not supported; supported versions: 2026-07-28, 2025-11-25, 2025-06-18/,
        },
      ];
      for (const r of refusals) {
        await t.step(`${e.name}: ${r.name} is 400 ${r.code} with the request's id`, async () => {
          const body = await json(await r.send(), 400);
          assert.equal(body.id, 9);
          assert.equal(body.error.code, r.code);
          assert.match(body.error.message, r.message);
        });
      }
    }
  });
});

Deno.test("a 2025 client and a 2026 client on one endpoint at the same time", async (t) => {
  await withEndpoints({}, async (endpoints) => {
    for (const e of endpoints) {
      await t.step(`${e.name}: each request is answered in its own revision`, async () => {
        const exchanges = Array.from({ length: 12 }, (_, i) => {
          switch (i % 4) {
            case 0:
              return {
                revision: "2025 initialize",
                response: mcpPost(e.url, { ...INITIALIZE, id: i }, e.auth),
              };
            case 1:
              return {
                revision: "2025",
                response: legacy(e, { jsonrpc: "2.0", id: i, method: "tools/list" }, "2025-06-18"),
              };
            case 2:
              return { revision: "2026", response: modern(e, "tools/list", {}, { id: i }) };
            default:
              return {
                revision: "2026 discover",
                response: modern(e, "server/discover", {}, { id: i }),
              };
          }
        });
        const answers = await Promise.all(
          exchanges.map(async (x) => (await readMessages(await x.response))[0]!),
        );
        answers.forEach((answer, i) => {
          const { revision } = exchanges[i]!;
          assert.equal(answer.id, i, revision);
          if (revision === "2025 initialize") {
            assert.equal(answer.result.protocolVersion, "2025-11-25");
            assert.equal("resultType" in answer.result, false);
          } else if (revision === "2025") {
            assert.ok(answer.result.tools.length > 0);
            assert.equal("resultType" in answer.result, false);
            assert.equal("ttlMs" in answer.result, false);
          } else if (revision === "2026") {
            assert.equal(answer.result.resultType, "complete");
            assert.equal(answer.result.cacheScope, e.cacheScope);
          } else {
            assert.deepEqual(answer.result.supportedVersions, [
              "2026-07-28",
              "2025-11-25",
              "2025-06-18",
            ]);
          }
        });
      });
    }
  });
});

Deno.test("the transport rules are the same in both revisions", async (t) => {
  // A stopped clock: the rate limiter refills nothing while the test runs.
  const now = () => 1_700_000_000_000;
  const revisions = [
    {
      name: "2025-11-25",
      request: (method: string, params: Record<string, unknown> = {}) => ({
        body: { jsonrpc: "2.0", id: 1, method, params },
        headers: { "MCP-Protocol-Version": "2025-11-25" } as Record<string, string>,
      }),
    },
    { name: "2026-07-28", request: modernRequest },
  ];

  const onboarding = await startTestServer(
    { VESTIBULE_TRUSTED_ORIGINS: "https://console.example.com" },
    { now },
  );
  const ws = await startWorkspaceServer({}, { now });
  try {
    const mcp = `${onboarding.authUrl}/mcp`;
    for (const r of revisions) {
      await t.step(`${r.name}: the 16 KiB cap, exactly and one byte over`, async () => {
        const { body, headers } = r.request("tools/list");
        const text = JSON.stringify({ ...body, params: { ...(body.params as object), pad: "" } });
        const padded = (size: number) =>
          text.replace('"pad":""', `"pad":"${"x".repeat(size - text.length)}"`);
        const exact = await mcpPost(mcp, padded(16384), headers);
        assert.equal(exact.status, 200);
        await exact.body?.cancel();
        const over = await mcpPost(mcp, padded(16385), headers);
        assert.equal(over.status, 413);
        assert.equal(over.headers.get("Connection"), "close");
        assert.match((await over.json()).error.message, /exceeds 16384 bytes/);
      });

      await t.step(`${r.name}: an untrusted Origin is 403, a trusted one is served`, async () => {
        const { body, headers } = r.request("tools/list");
        const refused = await mcpPost(mcp, body, { ...headers, Origin: "http://attacker.example" });
        assert.equal(refused.status, 403);
        assert.match((await refused.json()).error.message, /not trusted/);
        const served = await mcpPost(mcp, body, {
          ...headers,
          Origin: "https://console.example.com",
        });
        assert.equal(served.status, 200);
        assert.equal(
          served.headers.get("Access-Control-Allow-Origin"),
          "https://console.example.com",
        );
        await served.body?.cancel();
      });

      await t.step(`${r.name}: an unknown Host (DNS rebinding) is 403`, async () => {
        const { body, headers } = r.request("tools/list");
        const text = JSON.stringify(body);
        const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
        const answer = await rawExchange(mcp, [
          `POST /mcp HTTP/1.1\r\nHost: rebound.example:80\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\n${lines}Content-Length: ${text.length}\r\n` +
          `Connection: close\r\n\r\n${text}`,
        ]);
        assert.match(answer, /^HTTP\/1\.1 403/);
      });

      await t.step(`${r.name}: no token is 401 with the discovery challenge`, async () => {
        const { body, headers } = r.request("tools/list");
        const response = await mcpPost(`${ws.server.apiUrl}/api/mcp`, body, headers);
        assert.equal(response.status, 401);
        assert.match(
          response.headers.get("WWW-Authenticate")!,
          /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource", scope="app\.access"$/,
        );
        await response.body?.cancel();
      });

      await t.step(`${r.name}: a tool outside the token's scopes is the step-up 403`, async () => {
        const { token } = await ws.token(["app.access"]);
        const { body, headers } = r.request("tools/call", { name: "list_members", arguments: {} });
        const response = await mcpPost(`${ws.server.apiUrl}/api/mcp`, body, {
          ...headers,
          Authorization: `Bearer ${token}`,
        });
        assert.equal(response.status, 403);
        const challenge = response.headers.get("WWW-Authenticate")!;
        assert.match(challenge, /error="insufficient_scope"/);
        assert.match(challenge, /scope="app\.access members\.read"/);
        assert.equal((await response.json()).error, "insufficient_scope");
      });
    }

    await t.step("over the rate limit: 429 with Retry-After in both revisions", async () => {
      const limited = await startTestServer({ VESTIBULE_RATE_LIMITS: "onboarding=60:2" }, { now });
      try {
        const send = (r: (typeof revisions)[number]) => {
          const { body, headers } = r.request("tools/list");
          return mcpPost(`${limited.authUrl}/mcp`, body, headers);
        };
        for (const r of revisions) {
          const response = await send(r);
          assert.equal(response.status, 200, r.name);
          await response.body?.cancel();
        }
        for (const r of revisions) {
          const response = await send(r);
          assert.equal(response.status, 429, r.name);
          assert.equal(response.headers.get("Retry-After"), "1");
          assert.match((await response.json()).error.message, /retry after 1 second$/);
        }
      } finally {
        await limited.close();
      }
    });
  } finally {
    await onboarding.close();
    await ws.close();
  }
});
