// `admin check --live`, discovery by domain: the AI Catalog and both Server Cards fetched
// through the public URLs as an agent fetches them (catalog, then each card's `url`), checked
// for the headers a browser and a cache need, and compared with what this release serves and
// with the live onboarding endpoint's server/discover. Each disagreement is one fault naming
// the field: a stale cache in front, or a proxy that strips ETag or CORS, shows up here.
import type { Config } from "../../config/config.ts";
import {
  AI_CATALOG_PATH,
  AI_CATALOG_TYPE,
  SERVER_CARD_TYPE,
  serverCard,
} from "../../content/server_cards.ts";
import { type McpServer, mcpServers } from "../../mcp/servers.ts";
import { MODERN_PROTOCOL_VERSION } from "../../mcp/versions.ts";
import { fault, type Finding, ok } from "./findings.ts";

/** The doctor's fetch: null (with a fault already noted) when nothing answered. */
export type Get = (url: string, init?: RequestInit) => Promise<Response | null>;

type Json = Record<string, unknown>;

export async function discoveryChecks(config: Config, get: Get): Promise<Finding[]> {
  const findings: Finding[] = [];
  const servers = mcpServers(config);
  const catalogUrl = `${config.baseUrl}${AI_CATALOG_PATH}`;
  const catalog = await _document(get, catalogUrl, AI_CATALOG_TYPE, findings);
  if (catalog === null) return findings;
  const entries = Array.isArray(catalog["entries"]) ? catalog["entries"] as Json[] : [];
  const cardUrls = new Set([servers.onboarding.cardUrl, servers.workspace.cardUrl]);
  const ours = (e: Json) => e?.["type"] !== SERVER_CARD_TYPE || cardUrls.has(String(e["url"]));
  const stray = entries.filter((e) => !ours(e));
  for (const entry of stray) {
    findings.push(fault(
      `entry ${JSON.stringify(entry["identifier"])} points at ${
        JSON.stringify(entry["url"])
      }, not at one of this server's cards`,
      catalogUrl,
    ));
  }
  if (stray.length === 0) findings.push(ok(`${entries.length} entries, all ours`, catalogUrl));

  const live = await _discover(get, servers.onboarding.endpoint);
  for (const server of [servers.onboarding, servers.workspace]) {
    const listed = entries.find((e) => e?.["url"] === server.cardUrl);
    if (listed === undefined) {
      findings.push(fault(`no entry points at ${server.cardUrl}`, catalogUrl));
      continue;
    }
    const card = await _document(get, server.cardUrl, SERVER_CARD_TYPE, findings);
    if (card === null) continue;
    const answered = server === servers.onboarding ? live : null;
    const wrong = _disagreements(card, server, answered);
    for (const what of wrong) findings.push(fault(what, server.cardUrl));
    if (wrong.length > 0) continue;
    const against = answered === null ? "this release" : "the live endpoint";
    const { name, version } = server.info;
    findings.push(ok(`agrees with ${against}: ${name} ${version}`, server.cardUrl));
  }
  return findings;
}

/**
 * A discovery document: 200 with its media type, the CORS and caching headers the extension
 * asks for, a strong ETag, and 304 to it. Null (faults noted) when it cannot be read.
 */
async function _document(
  get: Get,
  url: string,
  type: string,
  findings: Finding[],
): Promise<Json | null> {
  const response = await get(url, { headers: { Accept: type } });
  if (response === null) return null;
  if (response.status !== 200) {
    await response.body?.cancel();
    findings.push(fault(`expected 200, got ${response.status}`, url));
    return null;
  }
  let body: unknown = null;
  try {
    body = await response.json();
  } catch { /* reported below */ }
  if (typeof body !== "object" || body === null) {
    findings.push(fault("the body is not a JSON object", url));
    return null;
  }
  const headers = response.headers;
  const problems: string[] = [];
  if (!(headers.get("Content-Type") ?? "").startsWith(type)) {
    problems.push(`Content-Type is ${JSON.stringify(headers.get("Content-Type"))}, not ${type}`);
  }
  if (headers.get("Access-Control-Allow-Origin") !== "*") {
    problems.push("Access-Control-Allow-Origin is not *");
  }
  if (!/\betag\b/i.test(headers.get("Access-Control-Expose-Headers") ?? "")) {
    problems.push("Access-Control-Expose-Headers does not name ETag");
  }
  if (!/\bmax-age=\d+/.test(headers.get("Cache-Control") ?? "")) {
    problems.push("Cache-Control has no max-age");
  }
  const etag = headers.get("ETag");
  if (etag === null || etag.startsWith("W/")) {
    problems.push(etag === null ? "no ETag" : `the ETag ${etag} is weak`);
  } else {
    const again = await get(url, { headers: { Accept: type, "If-None-Match": etag } });
    await again?.body?.cancel();
    if (again !== null && again.status !== 304) {
      problems.push(`If-None-Match with its ETag answered ${again.status}, not 304`);
    }
  }
  const strip = "is a proxy in front stripping or rewriting headers?";
  for (const problem of problems) findings.push(fault(`${problem}: ${strip}`, url));
  return body as Json;
}

/** server/discover on the public onboarding endpoint, as a 2026-07-28 client sends it. */
async function _discover(get: Get, url: string): Promise<Json | null> {
  const response = await get(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": MODERN_PROTOCOL_VERSION,
      "Mcp-Method": "server/discover",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
          "io.modelcontextprotocol/clientInfo": { name: "vestibule-doctor", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  if (response === null || response.status !== 200) {
    await response?.body?.cancel();
    return null;
  }
  const text = await response.text();
  const sse = (response.headers.get("Content-Type") ?? "").startsWith("text/event-stream");
  try {
    const body = JSON.parse(sse ? text.match(/^data: ?(.*)$/m)?.[1] ?? "" : text);
    const result = body?.result;
    return typeof result === "object" && result !== null ? result : null;
  } catch {
    return null;
  }
}

/**
 * What a card says otherwise than the server: against the live server/discover where it
 * answered (the onboarding endpoint), else against what this release serves.
 */
function _disagreements(card: Json, server: McpServer, live: Json | null): string[] {
  const expected = serverCard(server);
  const liveInfo = (live?.["_meta"] as Json | undefined)?.["io.modelcontextprotocol/serverInfo"];
  const truth: Json = typeof liveInfo === "object" && liveInfo !== null
    ? { ...expected, ...liveInfo as Json }
    : expected;
  const source = truth === expected ? "this release serves" : "server/discover reports";
  const wrong: string[] = [];
  for (const field of ["name", "version", "title", "description"]) {
    if (card[field] !== truth[field]) {
      wrong.push(
        `${field} is ${JSON.stringify(card[field])} but ${source} ${JSON.stringify(truth[field])}`,
      );
    }
  }
  const remotes = Array.isArray(card["remotes"]) ? card["remotes"] as Json[] : [];
  const remote = remotes.find((r) => r?.["type"] === "streamable-http");
  if (remote?.["url"] !== server.endpoint) {
    wrong.push(
      `its streamable-http remote is ${JSON.stringify(remote?.["url"])}, not ${server.endpoint}`,
    );
  }
  const versions = Array.isArray(live?.["supportedVersions"])
    ? live["supportedVersions"]
    : (expected["remotes"] as Json[])[0]!["supportedProtocolVersions"];
  const declared = remote?.["supportedProtocolVersions"];
  if (JSON.stringify(declared) !== JSON.stringify(versions)) {
    wrong.push(
      `supportedProtocolVersions is ${JSON.stringify(declared)} but the endpoint negotiates ${
        JSON.stringify(versions)
      }`,
    );
  }
  return wrong;
}
