/**
 * Discovery by domain (MCP Server Cards, SEP-2127; reference copy in the shared spec): the AI
 * Catalog at {base_url}/.well-known/ai-catalog.json and one Server Card per MCP server at
 * `<endpoint>/server-card`. Built from mcp/servers.ts (the serverInfo both endpoints report)
 * and the protocol versions the endpoints negotiate, so a card says what the server says.
 *
 * Nothing secret can reach them: they are made of the three public origins, the words and
 * versions in this file's sources, and for an upstream only the words the operator wrote
 * under its `catalog` field; never an upstream's URL, command, name, headers or scopes.
 */
import type { Config } from "../config/config.ts";
import type { CatalogListing } from "../config/upstreams.ts";
import { corsPreflight, DISCOVERY_CORS } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import type { MethodHandlers } from "../http/router.ts";
import {
  createStaticAsset,
  followingJsonHandler,
  type ServeOptions,
  staticAssetHandler,
} from "../http/static_asset.ts";
import { type McpServer, mcpServers, publisherHost } from "../mcp/servers.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../mcp/versions.ts";

type Origins = Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;

export const SERVER_CARD_TYPE = "application/mcp-server-card+json";
export const AI_CATALOG_TYPE = "application/ai-catalog+json";
/** The `$schema` every v1 card carries (schema.json, `ServerCard.$schema`). */
export const SERVER_CARD_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
export const AI_CATALOG_PATH = "/.well-known/ai-catalog.json";

/** A card changes only with a release or the origins; a client revalidates with its ETag. */
const CARD_CACHE: ServeOptions = {
  cacheControl: "public, max-age=3600",
  headers: DISCOVERY_CORS.headers,
};
/** The catalog follows an upstreams reload, so it is kept for less. */
const CATALOG_CACHE: ServeOptions = {
  cacheControl: "public, max-age=300",
  headers: DISCOVERY_CORS.headers,
};

/** A v1 Server Card of one of our MCP servers. */
export function serverCard(server: McpServer): Record<string, unknown> {
  const { info } = server;
  const remote: Record<string, unknown> = {
    type: "streamable-http",
    url: server.endpoint,
    supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
  };
  if (server.key === "workspace") {
    // Declared, never carried: the client gets its own token through OAuth (no `value`).
    remote["headers"] = [{
      name: "Authorization",
      description: 'An OAuth 2.1 access token, sent as "Bearer <token>". The endpoint\'s 401 ' +
        "names its protected-resource metadata (RFC 9728), and a person signs in and consents.",
      isRequired: true,
      isSecret: true,
    }];
  }
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: info.name,
    version: info.version,
    title: info.title,
    description: info.description,
    websiteUrl: server.websiteUrl,
    remotes: [remote],
  };
}

/**
 * The AI Catalog: one entry per server of our own, and one per upstream the operator lists,
 * whose card is the workspace's (it is reached only through the workspace).
 */
export function aiCatalog(
  origins: Origins,
  listings: readonly CatalogListing[],
): Record<string, unknown> {
  const host = publisherHost(origins.baseUrl);
  const servers = mcpServers(origins);
  const entry = (id: string, url: string) => ({
    identifier: `urn:air:${host}:mcp:${id}`,
    type: SERVER_CARD_TYPE,
    url,
  });
  return {
    specVersion: "1.0",
    entries: [
      entry(servers.onboarding.key, servers.onboarding.cardUrl),
      entry(servers.workspace.key, servers.workspace.cardUrl),
      ...listings.map((listing) => ({
        ...entry(listing.id, servers.workspace.cardUrl),
        title: listing.title,
        description: listing.description,
      })),
    ],
  };
}

/** GET `<endpoint>/server-card`: the card, computed once. */
export async function serverCardHandler(server: McpServer): Promise<Handler> {
  const asset = await createStaticAsset(
    JSON.stringify(serverCard(server), null, 2) + "\n",
    SERVER_CARD_TYPE,
  );
  return staticAssetHandler(asset, CARD_CACHE);
}

/**
 * GET /.well-known/ai-catalog.json, built again when `upstreams()` returns another list (a
 * reload), and otherwise from memory.
 */
export function aiCatalogHandler(
  origins: Origins,
  upstreams: () => readonly { readonly config: { readonly catalog?: CatalogListing } }[],
): Promise<Handler> {
  const listings = () => upstreams().flatMap(({ config }) => config.catalog ?? []);
  return followingJsonHandler(
    upstreams,
    () => aiCatalog(origins, listings()),
    CATALOG_CACHE,
    AI_CATALOG_TYPE,
  );
}

/** A discovery document's route: GET (HEAD derived) and the preflight the extension asks for. */
export function discoveryRoute(handler: Handler): MethodHandlers {
  return { GET: handler, OPTIONS: corsPreflight(DISCOVERY_CORS, { GET: handler }) };
}
