// Discovery by domain, as the MCP Server Cards extension has a client do it, from nothing but
// the bare {base_url}: the AI Catalog, then each card its entries point to, then a connection
// to the card's remote, whose server/discover and initialize must agree with the card.
import assert from "node:assert/strict";
import { startWorkspaceServer } from "../support/workspace_support.ts";
import { startGatewayServer, writeUpstreamsFile } from "../support/gateway_support.ts";
import { createTestApp } from "../support/harness.ts";
import { serverCardProblems } from "../../content/server_card_schema.ts";

const CARD_TYPE = "application/mcp-server-card+json";
const CATALOG_TYPE = "application/ai-catalog+json";
const DISCOVERY_CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET",
  "access-control-allow-headers": "Content-Type, If-None-Match",
  "access-control-expose-headers": "ETag",
};

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** GET as the extension says: the media type in Accept; the headers every answer must carry. */
async function getDocument(url: string, accept: string, type: string): Promise<Json> {
  const response = await fetch(url, { headers: { Accept: accept } });
  assert.equal(response.status, 200, url);
  assert.equal(response.headers.get("Content-Type"), type, url);
  for (const [name, value] of Object.entries(DISCOVERY_CORS)) {
    assert.equal(response.headers.get(name), value, `${name} of ${url}`);
  }
  assert.match(response.headers.get("Cache-Control") ?? "", /^public, max-age=\d+$/, url);
  const etag = response.headers.get("ETag") ?? "";
  assert.match(etag, /^"[^"]+"$/, `a strong ETag for ${url}`);
  const body = await response.json();
  // Revalidation: the same ETag is 304, with the validators and nothing else.
  const again = await fetch(url, { headers: { Accept: accept, "If-None-Match": etag } });
  assert.equal(again.status, 304, url);
  assert.equal(again.headers.get("ETag"), etag);
  assert.equal(again.headers.get("Access-Control-Expose-Headers"), "ETag");
  assert.equal(await again.text(), "");
  // A browser's preflight before a revalidation from another origin.
  const preflight = await fetch(url, {
    method: "OPTIONS",
    headers: {
      Origin: "https://agent.example",
      "Access-Control-Request-Method": "GET",
      "Access-Control-Request-Headers": "if-none-match",
    },
  });
  await preflight.body?.cancel();
  assert.equal(preflight.status, 204);
  for (const [name, value] of Object.entries(DISCOVERY_CORS)) {
    assert.equal(preflight.headers.get(name), value, `preflight ${name} of ${url}`);
  }
  return body;
}

/** A 2026-07-28 server/discover to `url`, with the bearer token where one is needed. */
async function discover(url: string, token: string | null): Promise<Json> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "server/discover",
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "discoverer", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  assert.equal(response.status, 200, url);
  return (await response.json()).result;
}

async function initialize(url: string, version: string, token: string | null): Promise<Json> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "discoverer", version: "1" },
      },
    }),
  });
  assert.equal(response.status, 200, url);
  return (await response.json()).result;
}

/** The catalog of `baseUrl` and the cards its Server Card entries point to. */
async function catalogAndCards(baseUrl: string) {
  const catalog = await getDocument(
    `${baseUrl}/.well-known/ai-catalog.json`,
    CATALOG_TYPE,
    CATALOG_TYPE,
  );
  assert.equal(catalog.specVersion, "1.0");
  const entries = (catalog.entries as Json[]).filter((entry) => entry.type === CARD_TYPE);
  const cards = new Map<string, Json>();
  for (const entry of entries) {
    if (!cards.has(entry.url)) {
      cards.set(entry.url, await getDocument(entry.url, CARD_TYPE, CARD_TYPE));
    }
  }
  return { catalog, entries, cards };
}

Deno.test("discovery from the bare {base_url}: catalog, cards, connect, server/discover agree", async () => {
  const ws = await startWorkspaceServer();
  try {
    const { server } = ws;
    const { token } = await ws.token(["app.access"]);
    const { entries, cards } = await catalogAndCards(server.baseUrl);
    const host = new URL(server.baseUrl).hostname;
    assert.deepEqual(entries.map((e) => e.url), [
      `${server.authUrl}/mcp/server-card`,
      `${server.apiUrl}/api/mcp/server-card`,
    ]);
    for (const entry of entries) {
      const card = cards.get(entry.url)!;
      assert.deepEqual(serverCardProblems(card), [], entry.url);
      assert.equal(entry.identifier, `urn:air:${host}:mcp:${card.name.split("/")[1]}`);
      const remote = (card.remotes as Json[]).find((r) => r.type === "streamable-http")!;
      // The card lives at <streamable-http-url>/server-card.
      assert.equal(`${remote.url}/server-card`, entry.url);
      const needsToken = remote.headers?.some((h: Json) => h.name === "Authorization") ?? false;
      const bearer = needsToken ? token : null;

      const live = await discover(remote.url, bearer);
      const info = live._meta["io.modelcontextprotocol/serverInfo"];
      for (const field of ["name", "version", "title", "description"]) {
        assert.equal(card[field], info[field], `${field} of ${entry.url}`);
      }
      assert.deepEqual(remote.supportedProtocolVersions, live.supportedVersions);
      // Every legacy version the card names is one initialize negotiates, with the same names.
      for (const version of remote.supportedProtocolVersions.slice(1)) {
        const legacy = await initialize(remote.url, version, bearer);
        assert.equal(legacy.protocolVersion, version);
        assert.deepEqual(legacy.serverInfo, info);
      }
    }
    // A card carries no credential: the workspace header is declared, its value never given.
    const workspace = cards.get(`${server.apiUrl}/api/mcp/server-card`)!;
    assert.equal(workspace.remotes[0].headers[0].value, undefined);
    assert.ok(!JSON.stringify([...cards.values()]).includes(token));
  } finally {
    await ws.close();
  }
});

Deno.test("the catalog answers a plain JSON client too; the endpoints' own GET keeps its meaning", async () => {
  const ws = await startWorkspaceServer();
  try {
    const { server } = ws;
    const plain = await fetch(`${server.baseUrl}/.well-known/ai-catalog.json`, {
      headers: { Accept: "application/json" },
    });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get("Content-Type"), CATALOG_TYPE);
    assert.equal((await plain.json()).specVersion, "1.0");
    const gzip = await fetch(`${server.apiUrl}/api/mcp/server-card`, {
      headers: { Accept: CARD_TYPE, "Accept-Encoding": "gzip" },
    });
    assert.match(gzip.headers.get("ETag") ?? "", /^"[^"]+"$/, "gzip keeps a strong ETag");
    await gzip.body?.cancel();
    // GET on the MCP endpoint itself is the transport's (405 on the stateless onboarding one).
    const get = await fetch(`${server.authUrl}/mcp`, { headers: { Accept: "text/event-stream" } });
    await get.body?.cancel();
    assert.equal(get.status, 405);
    // Each document lives on its own origin only.
    const elsewhere = await fetch(`${server.baseUrl}/mcp/server-card`);
    await elsewhere.body?.cancel();
    assert.equal(elsewhere.status, 404);
  } finally {
    await ws.close();
  }
});

Deno.test("upstreams stay out of the catalog unless listed, and then only as the workspace", async () => {
  const gw = await startGatewayServer([
    {
      name: "crm-internal",
      url: "http://10.1.2.3:9/private-crm",
      headers: { Authorization: { value: "Bearer upstream-s3cret" } },
      catalog: {
        id: "customer-records",
        title: "Customer records",
        description: "Look up a customer's orders through the workspace.",
      },
    },
    { name: "billing-backend", url: "http://10.1.2.4:9/billing" },
  ]);
  try {
    const { server } = gw;
    const { entries, cards } = await catalogAndCards(server.baseUrl);
    assert.deepEqual(entries.at(-1), {
      identifier: `urn:air:${new URL(server.baseUrl).hostname}:mcp:customer-records`,
      type: CARD_TYPE,
      url: `${server.apiUrl}/api/mcp/server-card`,
      title: "Customer records",
      description: "Look up a customer's orders through the workspace.",
    });
    assert.equal(entries.length, 3);
    const published = JSON.stringify({ entries, cards: [...cards.values()] });
    for (const secret of ["crm-internal", "10.1.2.3", "private-crm", "s3cret", "billing"]) {
      assert.ok(!published.includes(secret), `${secret} is published`);
    }
  } finally {
    await gw.close();
  }
});

Deno.test("the catalog follows an upstreams reload: a listing added to the file is published", async () => {
  const listed = (catalog?: Record<string, string>) => ({
    upstreams: [{
      name: "crm-internal",
      url: "http://10.1.2.3:9/mcp",
      ...(catalog ? { catalog } : {}),
    }],
  });
  const file = await writeUpstreamsFile(listed().upstreams);
  const app = await createTestApp({ VESTIBULE_UPSTREAMS: file });
  try {
    // In process, with the Host a client sends.
    const send = (url: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set("Host", new URL(url).host);
      return app.handler(new Request(url, { headers }), { clientAddress: "192.0.2.1" });
    };
    const url = `${app.config.baseUrl}/.well-known/ai-catalog.json`;
    const before = await send(url);
    assert.equal((await before.json()).entries.length, 2);
    await Deno.writeTextFile(
      file,
      JSON.stringify(
        listed({ id: "customer-records", title: "Customer records", description: "Orders." }),
      ),
    );
    await app.reloadUpstreams();
    const after = await send(url, { headers: { "If-None-Match": before.headers.get("ETag")! } });
    assert.equal(after.status, 200, "a changed catalog is not 304 to the old ETag");
    const entries = (await after.json()).entries;
    assert.deepEqual(entries.map((e: Json) => e.identifier.split(":").at(-1)), [
      "onboarding",
      "workspace",
      "customer-records",
    ]);
  } finally {
    await app.close();
    await Deno.remove(file);
  }
});

Deno.test("llms.txt, the connection guide and the developer reference point to the catalog", async () => {
  const ws = await startWorkspaceServer();
  try {
    const { baseUrl, authUrl, apiUrl } = ws.server;
    const catalog = `${baseUrl}/.well-known/ai-catalog.json`;
    for (
      const [url, mentions] of [
        [`${baseUrl}/llms.txt`, [
          catalog,
          `${authUrl}/mcp/server-card`,
          `${apiUrl}/api/mcp/server-card`,
        ]],
        [`${authUrl}/llms.txt`, [catalog, `${apiUrl}/api/mcp/server-card`]],
        [`${authUrl}/agents`, [catalog]],
        [`${baseUrl}/developers.md`, [
          catalog,
          `${authUrl}/mcp/server-card`,
          "127.0.0.1/workspace",
        ]],
      ] as const
    ) {
      const text = await (await fetch(url)).text();
      for (const mention of mentions) assert.ok(text.includes(mention), `${url} names ${mention}`);
    }
  } finally {
    await ws.close();
  }
});
