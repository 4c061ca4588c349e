// The AI Catalog and the Server Cards, built from the serverInfo both endpoints report
// (src/mcp/servers.ts): valid against the reference schema, domain-anchored, and holding
// nothing of an upstream but the words its operator published.
import assert from "node:assert/strict";
import { aiCatalog, SERVER_CARD_TYPE, serverCard } from "../../src/content/server_cards.ts";
import { mcpServers, publisherHost, publisherNamespace } from "../../src/mcp/servers.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";
import { serverCardProblems } from "./server_card_schema.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const ORIGINS = [
  {
    baseUrl: "https://www.example.com",
    authUrl: "https://auth.example.com",
    apiUrl: "https://api.example.com",
  },
  {
    baseUrl: "http://127.0.0.1:8000",
    authUrl: "http://127.0.0.1:8001",
    apiUrl: "http://127.0.0.1:8002",
  },
  { baseUrl: "http://[::1]:8000", authUrl: "http://[::1]:8001", apiUrl: "http://[::1]:8002" },
];

Deno.test("both Server Cards are valid against the reference schema, for any origins", () => {
  for (const origins of ORIGINS) {
    for (const server of Object.values(mcpServers(origins))) {
      const card = serverCard(server);
      assert.deepEqual(serverCardProblems(card), [], `${server.key} at ${origins.baseUrl}`);
      // What initialize and server/discover report, field for field.
      for (const field of ["name", "version", "title", "description"] as const) {
        assert.equal(card[field], server.info[field]);
      }
      assert.deepEqual(card["remotes"], [{
        type: "streamable-http",
        url: server.endpoint,
        supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        ...(server.key === "workspace" ? { headers: (card["remotes"] as Json[])[0]!.headers } : {}),
      }]);
    }
  }
});

Deno.test("the schema check is real: a card with a bad name or a long description fails it", () => {
  const card = serverCard(mcpServers(ORIGINS[0]!).onboarding);
  assert.match(serverCardProblems({ ...card, name: "no-slash" }).join(), /\/name must match/);
  assert.match(
    serverCardProblems({ ...card, description: "x".repeat(101) }).join(),
    /\/description must NOT have more than 100 characters/,
  );
});

Deno.test("names are domain-anchored: reverse DNS of {base_url}'s host, urn:air identifiers", () => {
  assert.equal(publisherNamespace("https://www.example.com"), "com.example.www");
  assert.equal(publisherNamespace("http://127.0.0.1:8000"), "127.0.0.1");
  assert.equal(publisherNamespace("http://[::1]:8000"), "--1");
  assert.equal(publisherHost("https://www.example.com:8443"), "www.example.com");
  const servers = mcpServers(ORIGINS[0]!);
  assert.equal(servers.onboarding.info.name, "com.example.www/onboarding");
  assert.equal(servers.workspace.cardUrl, "https://api.example.com/api/mcp/server-card");
  assert.deepEqual(aiCatalog(ORIGINS[0]!, []), {
    specVersion: "1.0",
    entries: [
      {
        identifier: "urn:air:www.example.com:mcp:onboarding",
        type: SERVER_CARD_TYPE,
        url: "https://auth.example.com/mcp/server-card",
      },
      {
        identifier: "urn:air:www.example.com:mcp:workspace",
        type: SERVER_CARD_TYPE,
        url: "https://api.example.com/api/mcp/server-card",
      },
    ],
  });
});

Deno.test("the workspace card asks for OAuth in words and declares no secret value", () => {
  const card = serverCard(mcpServers(ORIGINS[0]!).workspace);
  const [remote] = card["remotes"] as Json[];
  assert.deepEqual(remote!.headers.map((h: Record<string, unknown>) => Object.keys(h).sort()), [
    ["description", "isRequired", "isSecret", "name"],
  ]);
  assert.match(remote!.headers[0].description, /OAuth 2\.1/);
  assert.equal(card["websiteUrl"], "https://auth.example.com/agents");
});

Deno.test("a listed upstream is an entry reached through the workspace card, in its operator's words", () => {
  const catalog = aiCatalog(ORIGINS[0]!, [
    { id: "customer-records", title: "Customer records", description: "Look up a customer." },
  ]);
  const entries = catalog["entries"] as Record<string, unknown>[];
  assert.deepEqual(entries[2], {
    identifier: "urn:air:www.example.com:mcp:customer-records",
    type: SERVER_CARD_TYPE,
    url: "https://api.example.com/api/mcp/server-card",
    title: "Customer records",
    description: "Look up a customer.",
  });
});
