/**
 * Finds the authorization server of an upstream that needs each person's own sign-in, as MCP
 * authorization asks of a client (authorization-server-discovery): RFC 9728 protected-resource
 * metadata, then RFC 8414 or OpenID Connect discovery of the first authorization server it
 * names. Every URL learned on the way is fetched from, or later shown to a person, only when
 * it is https (http on loopback when allowed) and its host resolves to public addresses (the
 * SSRF policy of our CIMD fetches, `refuseHost`), unless it is on the upstream's own origin:
 * the operator wrote that URL, and it already carries the person's MCP traffic.
 */
import * as v from "valibot";
import { isLoopbackHost } from "../../config/values.ts";
import { describeIssue } from "../../issue_words.ts";
import { type HostRefusal, refuseHost, type ResolveDns } from "../../oauth/addresses.ts";
import { fetchJson } from "./fetch_json.ts";
import { runtime } from "../../runtime/current.ts";

export interface AuthorizationServer {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  readonly registrationEndpoint: string | null;
  readonly revocationEndpoint: string | null;
  readonly clientIdMetadataDocumentSupported: boolean;
  readonly issParameterSupported: boolean;
  readonly tokenEndpointAuthMethods: readonly string[];
}

export interface UpstreamAuthorization {
  /** The protected resource's identifier (RFC 9728 `resource`), sent as RFC 8707 `resource`. */
  readonly resource: string;
  /** The scopes to ask for: the challenge's `scope`, else the metadata's `scopes_supported`, else none. */
  readonly scopes: readonly string[];
  readonly server: AuthorizationServer;
}

export interface DiscoveryDeps {
  readonly fetch?: typeof fetch;
  readonly resolveDns?: ResolveDns;
  /** Whether http on a loopback host passes the boundary (a loopback upstream, or tests). */
  readonly allowLoopback: boolean;
}

export type Discovery = { ok: true; value: UpstreamAuthorization } | {
  ok: false;
  /** One sentence naming the upstream URL or the refused URL's host; never a secret. */
  problem: string;
};

export interface BearerChallenge {
  readonly resourceMetadata: string | null;
  readonly scope: string | null;
  readonly error: string | null;
}

const FETCH_TIMEOUT_MS = 5_000;
/** More scopes than any real server asks for at once are not read. */
const MAX_SCOPES = 32;
export const MAX_METADATA_BYTES = 64 * 1024;

/**
 * The parameters of the first `Bearer` challenge of a `WWW-Authenticate` value (RFC 9110
 * §11.6.1, RFC 6750 §3, RFC 9728 §5.1), or null when it has none. Other schemes' challenges
 * and their token68 forms are skipped; a value may be quoted (with `\` escapes) or bare, and
 * a bare value runs to the next comma or space, so an unquoted URL survives.
 */
export function parseBearerChallenge(header: string | null): BearerChallenge | null {
  if (header === null) return null;
  for (const { scheme, params } of _challenges(header)) {
    if (scheme.toLowerCase() !== "bearer") continue;
    return {
      resourceMetadata: params.get("resource_metadata") ?? null,
      scope: params.get("scope") ?? null,
      error: params.get("error") ?? null,
    };
  }
  return null;
}

/**
 * The scope tokens of a `scope` value (RFC 6749 §3.3: space-delimited, each of visible
 * characters but `"` and `\`); others are dropped, so nothing else of the upstream's is repeated.
 */
export function scopeTokens(value: string | null): string[] {
  if (value === null) return [];
  const tokens = value.split(" ").filter((token) =>
    /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/.test(token)
  );
  return [...new Set(tokens)].slice(0, MAX_SCOPES);
}

function _challenges(header: string): { scheme: string; params: Map<string, string> }[] {
  const found: { scheme: string; params: Map<string, string> }[] = [];
  let at = 0;
  const skip = (pattern: RegExp) => {
    while (at < header.length && pattern.test(header[at]!)) at++;
  };
  const token = (): string | null => {
    const match = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/.exec(header.slice(at));
    if (match === null) return null;
    at += match[0].length;
    return match[0];
  };
  const value = (): string => {
    if (header[at] !== '"') {
      const start = at;
      skip(/[^,\s]/);
      return header.slice(start, at);
    }
    let text = "";
    for (at++; at < header.length && header[at] !== '"'; at++) {
      if (header[at] === "\\") at++;
      text += header[at] ?? "";
    }
    at++;
    return text;
  };
  while (at < header.length) {
    skip(/[\s,]/);
    const scheme = token();
    if (scheme === null) break; // not a challenge: nothing after it can be trusted
    const params = new Map<string, string>();
    found.push({ scheme, params });
    skip(/\s/);
    for (;;) {
      const start = at;
      const name = token();
      skip(/\s/);
      if (name === null || header[at] !== "=") {
        at = start; // the next challenge's scheme (or a token68, read as one)
        break;
      }
      at++;
      skip(/\s/);
      if (header[at] === "=") { // token68 padding: `Basic dXNlcg==`
        skip(/=/);
        break;
      }
      const text = value();
      const key = name.toLowerCase();
      if (!params.has(key)) params.set(key, text); // RFC 9110 §11.2: each name once
      skip(/\s/);
      if (header[at] !== ",") break;
      at++;
      skip(/\s/);
    }
  }
  return found;
}

/**
 * The authorization server of the MCP server at `upstreamUrl` and what to ask it for.
 * `challenge` is the `WWW-Authenticate` value of the upstream's 401, if there was one.
 */
export async function discoverAuthorization(
  upstreamUrl: string,
  challenge: string | null,
  deps: DiscoveryDeps,
): Promise<Discovery> {
  if (!URL.canParse(upstreamUrl) || !/^https?:$/.test(new URL(upstreamUrl).protocol)) {
    return { ok: false, problem: `The upstream URL ${upstreamUrl} is not an http or https URL` };
  }
  const upstream = new URL(upstreamUrl);
  const boundary = _boundary(upstream, deps);
  const doFetch = deps.fetch ?? fetch;
  const bearer = parseBearerChallenge(challenge);

  // MCP: the challenge's resource_metadata when present, else the well-known URIs in order.
  const candidates = bearer && bearer.resourceMetadata !== null
    ? [bearer.resourceMetadata]
    : _resourceMetadataUrls(upstream);
  const resourceDoc = await _firstDocument("protected-resource metadata", candidates, {
    doFetch,
    boundary,
    subject: upstreamUrl,
  });
  if (!resourceDoc.ok) return resourceDoc;
  const where = `The protected-resource metadata at ${new URL(resourceDoc.url).host}`;
  const resource = v.safeParse(ResourceMetadataSchema, resourceDoc.body);
  if (!resource.success) {
    return { ok: false, problem: `${where}: ${describeIssue(resource.issues[0])}` };
  }
  const declared = resource.output.resource;
  // RFC 9728 §3.3 (and §7.3 for a challenge's URL): the resource must be the one we asked
  // about. Compared as parsed URLs, so letter case of scheme and host, a default port and an
  // origin's trailing slash do not matter (our own `resource` rule); a path's trailing slash
  // does: /mcp and /mcp/ may be two resources, and the operator can write the URL as the
  // upstream names itself. As MCP's canonical server URI allows (and its SDK's client
  // accepts), the resource may also be the upstream's origin or a whole-segment prefix of its
  // path on that origin, as Vestibule's own {api_url} is for {api_url}/api/mcp: then that is
  // the `resource` asked for.
  if (!URL.canParse(declared) || !_covers(new URL(declared), upstream)) {
    return {
      ok: false,
      problem: `${where} names the resource ${declared}, not the upstream's URL ${upstreamUrl}`,
    };
  }

  const issuer = resource.output.authorization_servers[0]!;
  // RFC 8414 §2: an issuer is a URL without query or fragment.
  if (!URL.canParse(issuer) || !/^https?:$/.test(new URL(issuer).protocol) || /[?#]/.test(issuer)) {
    return {
      ok: false,
      problem: `${where} names an authorization server that is not an issuer URL`,
    };
  }
  const serverDoc = await _firstDocument(
    "authorization server metadata",
    _authorizationServerUrls(new URL(issuer)),
    { doFetch, boundary, subject: issuer },
  );
  if (!serverDoc.ok) return serverDoc;
  const server = await _authorizationServer(issuer, serverDoc, boundary);
  if (!server.ok) return server;

  const challenged = scopeTokens(bearer?.scope ?? null);
  const scopes = challenged.length > 0 ? challenged : resource.output.scopes_supported ?? [];
  return { ok: true, value: { resource: declared, scopes, server: server.value } };
}

async function _authorizationServer(
  issuer: string,
  doc: { url: string; body: unknown },
  boundary: Boundary,
): Promise<{ ok: true; value: AuthorizationServer } | { ok: false; problem: string }> {
  const where = `The authorization server metadata at ${new URL(doc.url).host}`;
  const parsed = v.safeParse(ServerMetadataSchema, doc.body);
  if (!parsed.success) {
    return { ok: false, problem: `${where}: ${describeIssue(parsed.issues[0])}` };
  }
  const meta = parsed.output;
  // RFC 8414 §3.3: a document that names another issuer than the one whose well-known URL
  // served it must not be used (a mix-up attack would start here).
  if (meta.issuer !== issuer) {
    return {
      ok: false,
      problem: `${where} names the issuer ${meta.issuer}, not ${issuer}, so it is not used`,
    };
  }
  // MCP security considerations: without S256 PKCE the client must refuse to proceed.
  if (!meta.code_challenge_methods_supported?.includes("S256")) {
    return {
      ok: false,
      problem:
        `The authorization server ${issuer} does not offer PKCE with S256, which MCP requires`,
    };
  }
  const endpoints = [
    ["authorization endpoint", meta.authorization_endpoint],
    ["token endpoint", meta.token_endpoint],
    ["registration endpoint", meta.registration_endpoint],
    ["revocation endpoint", meta.revocation_endpoint],
  ] as const;
  for (const [what, url] of endpoints) {
    if (url === undefined) continue;
    const problem = await boundary(`the ${what}`, url, AbortSignal.timeout(FETCH_TIMEOUT_MS));
    if (problem !== null) return { ok: false, problem };
  }
  return {
    ok: true,
    value: {
      issuer,
      authorizationEndpoint: meta.authorization_endpoint,
      tokenEndpoint: meta.token_endpoint,
      registrationEndpoint: meta.registration_endpoint ?? null,
      revocationEndpoint: meta.revocation_endpoint ?? null,
      clientIdMetadataDocumentSupported: meta.client_id_metadata_document_supported === true,
      issParameterSupported: meta.authorization_response_iss_parameter_supported === true,
      // RFC 8414 §2: when omitted, the default is client_secret_basic.
      tokenEndpointAuthMethods: meta.token_endpoint_auth_methods_supported ??
        ["client_secret_basic"],
    },
  };
}

/**
 * Why `url` may not be fetched from or shown to a person, or null. Host lookups are
 * remembered for one discovery: the endpoints usually share the issuer's host.
 */
type Boundary = (what: string, url: string, signal: AbortSignal) => Promise<string | null>;

function _boundary(upstream: URL, deps: DiscoveryDeps): Boundary {
  const resolveDns: ResolveDns = deps.resolveDns ??
    runtime.resolveDns;
  const judged = new Map<string, HostRefusal | null>();
  return async (what, url, signal) => {
    if (!URL.canParse(url)) return `Refused ${what} ${JSON.stringify(url)}: not an absolute URL`;
    const target = new URL(url);
    if (target.origin === upstream.origin) return null;
    const refused = (why: string) => `Refused ${what} on ${target.host}: ${why}`;
    if (target.username !== "" || target.password !== "") return refused("it carries userinfo");
    const loopbackHttp = deps.allowLoopback && target.protocol === "http:" &&
      isLoopbackHost(target.hostname);
    if (target.protocol !== "https:" && !loopbackHttp) return refused("it must use https");
    if (!judged.has(target.hostname)) {
      judged.set(
        target.hostname,
        await refuseHost(
          target.hostname,
          deps.allowLoopback,
          (host, type) => resolveDns(host, type, signal),
        ),
      );
    }
    const refusal = judged.get(target.hostname);
    if (!refusal) return null;
    return refused(
      refusal.kind === "unresolved"
        ? "the host does not resolve"
        : `the host resolves to a ${refusal.kind} address`,
    );
  };
}

/**
 * The first of `urls` that answers 200 with JSON. A 4xx moves on to the next (the document is
 * not there); anything else ends the search, since a redirect, an outage or a refusal by the
 * boundary is no reason to try elsewhere.
 */
async function _firstDocument(
  what: string,
  urls: readonly string[],
  ctx: { doFetch: typeof fetch; boundary: Boundary; subject: string },
): Promise<{ ok: true; url: string; body: unknown } | { ok: false; problem: string }> {
  for (const url of urls) {
    // One time budget for the host lookup, the fetch and the body.
    const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
    const refused = await ctx.boundary(`the ${what}`, url, signal);
    if (refused !== null) return { ok: false, problem: refused };
    const answer = await fetchJson(ctx.doFetch, url, { signal }, MAX_METADATA_BYTES);
    if (answer.ok && answer.status === 200) return { ok: true, url, body: answer.body };
    if (answer.status !== null && answer.status >= 400 && answer.status < 500) continue;
    const why = answer.ok ? `answered ${answer.status}` : answer.problem;
    return { ok: false, problem: `The ${what} at ${new URL(url).host} ${why}` };
  }
  return { ok: false, problem: `No ${what} for ${ctx.subject} at ${urls.join(" or ")}` };
}

/** Whether the resource `declared` is `upstream`, or its origin or a path prefix of it. */
function _covers(declared: URL, upstream: URL): boolean {
  if (declared.href === upstream.href) return true;
  if (
    declared.origin !== upstream.origin || declared.username !== "" || declared.search !== "" ||
    declared.hash !== ""
  ) {
    return false;
  }
  const path = declared.pathname.endsWith("/") ? declared.pathname : `${declared.pathname}/`;
  return upstream.pathname.startsWith(path);
}

/** RFC 9728 §3.1, in MCP's order: path-inserted, then the root. */
function _resourceMetadataUrls(upstream: URL): string[] {
  const root = `${upstream.origin}/.well-known/oauth-protected-resource`;
  const path = upstream.pathname.replace(/\/$/, "") + upstream.search;
  return path === "" ? [root] : [root + path, root];
}

/** RFC 8414 §3.1 path insertion, then OpenID Connect Discovery inserted and appended (MCP). */
function _authorizationServerUrls(issuer: URL): string[] {
  const { origin } = issuer;
  const path = issuer.pathname.replace(/\/$/, "");
  if (path === "") {
    return [
      `${origin}/.well-known/oauth-authorization-server`,
      `${origin}/.well-known/openid-configuration`,
    ];
  }
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

const ResourceMetadataSchema = v.looseObject({
  resource: v.string(),
  authorization_servers: v.pipe(
    v.array(v.string()),
    v.minLength(1, "must name at least one authorization server"),
  ),
  scopes_supported: v.optional(v.array(v.string())),
});

const ServerMetadataSchema = v.looseObject({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  registration_endpoint: v.optional(v.string()),
  revocation_endpoint: v.optional(v.string()),
  code_challenge_methods_supported: v.optional(v.array(v.string())),
  token_endpoint_auth_methods_supported: v.optional(v.array(v.string())),
  client_id_metadata_document_supported: v.optional(v.boolean()),
  authorization_response_iss_parameter_supported: v.optional(v.boolean()),
});

/**
 * The sign-in of the MCP server at `url` from nothing: its own challenge, then discovery, with
 * http on a loopback upstream allowed (the operator put it there).
 */
export async function discoverUpstream(url: string, deps: DiscoveryDeps): Promise<Discovery> {
  const challenge = await fetchChallenge(url, deps.fetch ?? fetch);
  return await discoverAuthorization(url, challenge, {
    ...deps,
    allowLoopback: deps.allowLoopback || isLoopbackHost(new URL(url).hostname),
  });
}

/**
 * The upstream's own challenge, from an unauthenticated request (MCP authorization: a client
 * learns where to sign in from the 401): null when it has none to give.
 */
export async function fetchChallenge(
  url: string,
  doFetch: typeof fetch = fetch,
): Promise<string | null> {
  try {
    const response = await doFetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
      redirect: "manual",
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    return response.status === 401 ? response.headers.get("WWW-Authenticate") : null;
  } catch {
    return null;
  }
}
