// Interop: a Server Card is only worth what a client can do with it. No package on the npm
// registry reads Server Cards yet (docs/mcp.md, "Discovery by domain"), so the cards from the
// AI Catalog are handed to the official MCP TypeScript SDK clients (v2 @modelcontextprotocol/
// client and v1 @modelcontextprotocol/sdk, nobody here wrote them) as a card-reading client
// would: connect to the card's streamable-http remote, with a token where the card asks for
// one, and compare what the SDK reports with what the card declared.
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS } from "npm:@modelcontextprotocol/sdk@^1.32.2/types.js";
import { startWorkspaceServer } from "../blackbox/support/workspace_support.ts";

const CARD_TYPE = "application/mcp-server-card+json";

Deno.test("the SDK clients connect where each Server Card says and find what it declares", async (t) => {
  const ws = await startWorkspaceServer();
  try {
    const { token } = await ws.token(["app.access"]);
    const catalog = await (await fetch(`${ws.server.baseUrl}/.well-known/ai-catalog.json`)).json();
    for (const entry of catalog.entries.filter((e: { type: string }) => e.type === CARD_TYPE)) {
      const card = await (await fetch(entry.url, { headers: { Accept: CARD_TYPE } })).json();
      const remote = card.remotes.find((r: { type: string }) => r.type === "streamable-http");
      const asks = remote.headers?.find((h: { name: string }) => h.name === "Authorization");
      const requestInit = asks ? { headers: { Authorization: `Bearer ${token}` } } : {};
      const declared = {
        name: card.name,
        version: card.version,
        title: card.title,
        description: card.description,
      };

      await t.step(
        `${card.name}: the v2 client discovers the card's versions and names`,
        async () => {
          const client = new Client({ name: "card-reader", version: "2.0.0" }, {
            versionNegotiation: { mode: "auto" },
          });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(remote.url), { requestInit }),
          );
          try {
            assert.equal(
              client.getNegotiatedProtocolVersion(),
              remote.supportedProtocolVersions[0],
            );
            assert.deepEqual(
              client.getDiscoverResult()?.supportedVersions,
              remote.supportedProtocolVersions,
            );
            const info = client.getServerVersion();
            assert.deepEqual(
              {
                name: info?.name,
                version: info?.version,
                title: info?.title,
                description: info?.description,
              },
              declared,
            );
          } finally {
            await client.close();
          }
        },
      );

      await t.step(
        `${card.name}: the v1 client initializes at a version the card names`,
        async () => {
          const client = new ClientV1({ name: "card-reader", version: "1.0.0" });
          const transport = new TransportV1(new URL(remote.url), { requestInit });
          await client.connect(transport);
          try {
            assert.ok(remote.supportedProtocolVersions.includes(transport.protocolVersion));
            assert.ok(SDK_VERSIONS.includes(transport.protocolVersion!));
            const info = client.getServerVersion();
            assert.deepEqual(
              {
                name: info?.name,
                version: info?.version,
                title: info?.title,
                description: info?.description,
              },
              declared,
            );
          } finally {
            await client.close();
          }
        },
      );
    }
  } finally {
    await ws.close();
  }
});
