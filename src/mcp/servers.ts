/**
 * The two MCP servers this service runs, named once: what `initialize` and `server/discover`
 * report (serverInfo), where each is served, and where its Server Card lives. The endpoints and
 * the published discovery documents (content/server_cards.ts) both read it, so a card cannot
 * say other than the server.
 */
import type { Config } from "../config/config.ts";
import type { ServerInfo } from "./dispatch.ts";

type Origins = Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;

type McpServerKey = "onboarding" | "workspace";

export interface McpServer {
  readonly key: McpServerKey;
  /** The serverInfo both eras report; `name` is the Server Card's (`<namespace>/<key>`). */
  readonly info: Required<ServerInfo>;
  /** The Streamable HTTP endpoint's exact URL. */
  readonly endpoint: string;
  /** Where its Server Card is served (MCP Server Cards: `<streamable-http-url>/server-card`). */
  readonly cardUrl: string;
  /** Where a person reads how to connect. */
  readonly websiteUrl: string;
}

/** The path every Server Card takes after its endpoint's (discovery.md "Hosted Server Card"). */
const SERVER_CARD_SUFFIX = "/server-card";

export const MCP_PATHS: Readonly<Record<McpServerKey, string>> = Object.freeze({
  onboarding: "/mcp",
  workspace: "/api/mcp",
});

/** Both servers' version: the contract's `serverInfo.version`. */
const VERSION = "1.0.0";

export function mcpServers(origins: Origins): Readonly<Record<McpServerKey, McpServer>> {
  const namespace = publisherNamespace(origins.baseUrl);
  const server = (
    key: McpServerKey,
    origin: string,
    words: { title: string; description: string },
    websiteUrl: string,
  ): McpServer => {
    const endpoint = `${origin}${MCP_PATHS[key]}`;
    return Object.freeze({
      key,
      info: Object.freeze({ name: `${namespace}/${key}`, version: VERSION, ...words }),
      endpoint,
      cardUrl: `${endpoint}${SERVER_CARD_SUFFIX}`,
      websiteUrl,
    });
  };
  return Object.freeze({
    onboarding: server("onboarding", origins.authUrl, {
      title: "Vestibule onboarding",
      description: "Public, no sign-in: how an agent connects to this business's workspace MCP.",
    }, `${origins.authUrl}/agents`),
    workspace: server("workspace", origins.apiUrl, {
      title: "Vestibule workspace",
      description: "The business's tools, for an agent a person authorized with OAuth 2.1.",
    }, `${origins.authUrl}/agents`),
  });
}

/**
 * The business's reverse-DNS namespace, from the host of {base_url} (`www.example.com` ->
 * `com.example.www`): Server Card names are domain-anchored, so two businesses never share
 * one. An IP address is kept as written (IPv6 with `-` for `:`), which a card name allows.
 */
export function publisherNamespace(baseUrl: string): string {
  const hostname = new URL(baseUrl).hostname;
  const ip = /^[0-9.]+$/.test(hostname) || hostname.startsWith("[");
  return ip ? publisherHost(baseUrl) : hostname.split(".").reverse().join(".");
}

/**
 * The publisher of the AI Catalog's identifiers (`urn:air:{publisher}:mcp:{name}`): the host
 * of {base_url} without its port, which would add a `:` to the URN; an IPv6 address with `-`.
 */
export function publisherHost(baseUrl: string): string {
  const host = new URL(baseUrl).hostname;
  return host.startsWith("[") ? host.slice(1, -1).replaceAll(":", "-") : host;
}
