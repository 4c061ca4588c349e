/**
 * An OAuth-protected upstream MCP server that nobody here wrote, for the tests of per-person
 * upstream sign-in: panva's `oidc-provider` as the authorization server, and an MCP server built
 * with the official SDK that accepts only its JWT access tokens (the SDK's bearer-auth
 * middleware, its protected-resource metadata handler). Both run in this process on their own
 * loopback ports. Never imported by production code.
 *
 *   const upstream = await startOAuthUpstream({ accessTokenTtlSeconds: 2 });
 *   // upstream.mcpUrl answers 401 with a resource_metadata challenge until given a token
 *   const callback = await upstream.authorize(authorizationUrl, "alice");
 *   await upstream.close();
 *
 * What a client must know about this provider: the `resource` parameter (exactly the MCP URL)
 * goes on the authorization request, and should go again on every token request (code and
 * refresh): with `openid` in the scope and no `resource` there, the token is an opaque one for
 * the provider's userinfo, which the MCP server refuses. The scope must name `mcp` (the
 * challenge's `scope`): with no scope at all the provider answers access_denied. PKCE S256 is
 * required of every client. Refresh tokens go to every client registered with the refresh_token
 * grant, `offline_access` or not; a public client (auth method `none`) gets a new one on each
 * refresh, and presenting a used one again ends the whole grant.
 */
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { errors as providerErrors } from "npm:oidc-provider@9.13.3";
import { createMcpExpressApp } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/express.js";
import { McpServer } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/mcp.js";
import { StreamableHTTPServerTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/streamableHttp.js";
import { requireBearerAuth } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/auth/middleware/bearerAuth.js";
import { metadataHandler } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/auth/handlers/metadata.js";
import { InvalidTokenError } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/auth/errors.js";
import type { AuthInfo } from "npm:@modelcontextprotocol/sdk@^1.32.2/server/auth/types.js";
import { z } from "npm:zod@4.6.7";
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose";

export interface OAuthUpstreamOptions {
  /** Access-token lifetime in seconds (short ones test refresh); default 3600. */
  readonly accessTokenTtlSeconds?: number;
  /** Whether the authorization server allows dynamic client registration (RFC 7591); default true. */
  readonly registration?: boolean;
  /** A client registered by the operator (for the upstreams file's `oauth` entry): id, secret, redirect URIs. */
  readonly staticClient?: { id: string; secret: string; redirectUris: string[] };
  /** Whether the provider offers public clients only (auth method `none`), whose refresh token it rotates on each use; default false. */
  readonly publicClientsOnly?: boolean;
  /** A scope beyond `mcp` that its tool `write_note` needs (then listed): a call without it is refused 403 insufficient_scope, as MCP's scope challenge. */
  readonly stepUpScope?: string;
}

export interface OAuthUpstream {
  /** The MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:P/mcp: answers 401 with WWW-Authenticate Bearer resource_metadata="…" without a valid token. */
  readonly mcpUrl: string;
  /** The authorization server's issuer (oidc-provider), a different port. */
  readonly issuer: string;
  /** Requests seen (counted before they reach oidc-provider / the MCP server): token endpoint by grant type, revocation, registration, MCP POSTs with a valid token. */
  readonly seen: {
    authorizationCode: number;
    refreshToken: number;
    revocation: number;
    registration: number;
    mcpCalls: number;
  };
  /** Drives the provider's own login and consent pages with fetch, as a browser would, from an authorization URL (the one Vestibule redirects a person to), signing in as `login`; returns the URL the provider finally redirects to (Vestibule's callback with code, state, iss). Cookies kept per call. */
  authorize(authorizationUrl: string, login: string): Promise<URL>;
  /** Ends every grant of `login` at the provider: their refresh tokens stop working (invalid_grant). */
  revokeGrantsOf(login: string): Promise<void>;
  /** Holds token-endpoint requests before they reach the provider until released (to kill a Vestibule mid-refresh); `held` resolves when the first request is being held. */
  holdTokenRequests(): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

// oidc-provider ships no types: the little of its API this module touches.
interface ProviderClient {
  grantTypeAllowed(grantType: string): boolean;
}
interface ProviderContext {
  readonly method: string;
  readonly path: string;
  readonly req: IncomingMessage & { body?: Buffer };
}

/** The one scope the MCP server's tokens carry; a token request for the resource asks for it. */
const MCP_SCOPE = "mcp";
const HOUR = 3600;
const DAY = 24 * HOUR;

export async function startOAuthUpstream(
  options: OAuthUpstreamOptions = {},
): Promise<OAuthUpstream> {
  const stepUp = options.stepUpScope === undefined ? [] : [options.stepUpScope];
  const seen = {
    authorizationCode: 0,
    refreshToken: 0,
    revocation: 0,
    registration: 0,
    mcpCalls: 0,
  };
  // Both servers listen first, so each knows its own URL before it is configured.
  const mcpServer = await listen();
  const asServer = await listen();
  const mcpUrl = `http://127.0.0.1:${port(mcpServer)}/mcp`;
  const issuer = `http://127.0.0.1:${port(asServer)}`;

  const provider = await _provider(issuer, mcpUrl, stepUp, options);

  // Grants by account, to end them all at once (the memory adapter has no such lookup).
  const grants = new Map<string, Set<string>>();
  provider.on("grant.saved", (grant: { accountId: string; jti: string }) => {
    grants.set(grant.accountId, (grants.get(grant.accountId) ?? new Set()).add(grant.jti));
  });

  let hold: { reached(): void; released: Promise<void>; release(): void } | null = null;
  provider.use(async (ctx: ProviderContext, next: () => Promise<void>) => {
    if (ctx.method === "POST" && ctx.path === "/token") {
      // The grant type is in the body: read it here and hand it on parsed (oidc-provider
      // takes a body read before it).
      const body = await readAll(ctx.req);
      ctx.req.body = body;
      const grantType = new URLSearchParams(body.toString()).get("grant_type");
      if (grantType === "authorization_code") seen.authorizationCode++;
      if (grantType === "refresh_token") seen.refreshToken++;
      if (hold) {
        hold.reached();
        await hold.released;
      }
    }
    if (ctx.method === "POST" && ctx.path === "/token/revocation") seen.revocation++;
    if (ctx.method === "POST" && ctx.path === "/reg") seen.registration++;
    await next();
  });
  asServer.on("request", provider.callback());

  mcpServer.on("request", _mcpApp(mcpUrl, issuer, stepUp, seen));

  return {
    mcpUrl,
    issuer,
    seen,
    authorize: (authorizationUrl, login) => signIn(issuer, authorizationUrl, login),
    async revokeGrantsOf(login) {
      for (const grantId of grants.get(login) ?? []) {
        await Promise.all([
          provider.AccessToken.revokeByGrantId(grantId),
          provider.RefreshToken.revokeByGrantId(grantId),
          provider.AuthorizationCode.revokeByGrantId(grantId),
          provider.Grant.adapter.destroy(grantId),
        ]);
      }
      grants.delete(login);
    },
    holdTokenRequests() {
      const held = Promise.withResolvers<void>();
      const released = Promise.withResolvers<void>();
      const release = () => {
        hold = null;
        released.resolve();
      };
      hold = { reached: held.resolve, released: released.promise, release };
      return { held: held.promise, release };
    },
    async close() {
      hold?.release();
      await Promise.all([stop(mcpServer), stop(asServer)]);
    },
  };
}

/** oidc-provider as the upstream's authorization server: JWT access tokens for `mcpUrl` only. */
async function _provider(
  issuer: string,
  mcpUrl: string,
  stepUp: readonly string[],
  options: OAuthUpstreamOptions,
) {
  const ttl = options.accessTokenTtlSeconds ?? 3600;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const signingKey = { ...await exportJWK(privateKey), kid: "upstream", alg: "RS256", use: "sig" };
  return new Provider(issuer, {
    jwks: { keys: [signingKey] },
    cookies: { keys: [crypto.randomUUID()] },
    clients: options.staticClient
      ? [{
        client_id: options.staticClient.id,
        client_secret: options.staticClient.secret,
        redirect_uris: options.staticClient.redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }]
      : [],
    pkce: { required: () => true },
    ...(options.publicClientsOnly ? { clientAuthMethods: ["none"] } : {}),
    scopes: ["openid", "offline_access", MCP_SCOPE, ...stepUp],
    issueRefreshToken: (_ctx: unknown, client: ProviderClient) =>
      client.grantTypeAllowed("refresh_token"),
    // Interaction, Session and Grant: oidc-provider's default lifetimes, set so that it does not
    // print a notice about each. Refresh tokens keep its default (a rotated one lives no longer
    // than the first).
    ttl: { AccessToken: ttl, Interaction: HOUR, Session: 14 * DAY, Grant: 14 * DAY },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: options.registration ?? true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo(_ctx: unknown, resourceIndicator: string) {
          if (resourceIndicator !== mcpUrl) throw new providerErrors.InvalidTarget();
          return {
            scope: [MCP_SCOPE, ...stepUp].join(" "),
            audience: mcpUrl,
            accessTokenTTL: ttl,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "RS256" } },
          };
        },
      },
    },
  });
}

/**
 * The MCP server behind the SDK's bearer-auth middleware: its protected-resource metadata, and a
 * 403 insufficient_scope for `write_note` without the step-up scope.
 */
function _mcpApp(
  mcpUrl: string,
  issuer: string,
  stepUp: readonly string[],
  seen: { mcpCalls: number },
) {
  const mcpApp = createMcpExpressApp({ host: "127.0.0.1" });
  const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const metadataPath = "/.well-known/oauth-protected-resource/mcp";
  const metadataUrl = `${new URL(mcpUrl).origin}${metadataPath}`;
  mcpApp.use(
    metadataPath,
    metadataHandler({
      resource: mcpUrl,
      authorization_servers: [issuer],
      scopes_supported: [MCP_SCOPE],
      resource_name: "OAuth upstream",
    }),
  );
  mcpApp.all(
    "/mcp",
    requireBearerAuth({
      verifier: {
        verifyAccessToken: (token: string) => verifyAccessToken(token, keys, issuer, mcpUrl),
      },
      requiredScopes: [MCP_SCOPE],
      resourceMetadataUrl: metadataUrl,
      expectedResource: new URL(mcpUrl),
    }),
    async (
      req: IncomingMessage & {
        body?: { method?: unknown; params?: { name?: unknown } };
        auth?: AuthInfo;
      },
      res: ServerResponse,
    ) => {
      if (req.method !== "POST") {
        res.writeHead(405, { Allow: "POST" }).end();
        return;
      }
      const [needed] = stepUp;
      if (
        needed !== undefined && req.body?.method === "tools/call" &&
        req.body.params?.name === "write_note" && !req.auth?.scopes.includes(needed)
      ) {
        // RFC 6750 §3.1 with MCP's scope and resource_metadata; an OAuth error body, not JSON-RPC.
        res.writeHead(403, {
          "Content-Type": "application/json",
          "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${needed}", ` +
            `resource_metadata="${metadataUrl}", error_description="Writing notes needs ${needed}"`,
        }).end(JSON.stringify({ error: "insufficient_scope" }));
        return;
      }
      seen.mcpCalls++;
      // Stateless, as the SDK's example: a server and a transport for each request.
      const server = mcpToolServer(needed !== undefined);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        transport.close();
        server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  return mcpApp;
}

function mcpToolServer(notes: boolean): McpServer {
  const server = new McpServer({ name: "oauth-upstream", version: "1.0.0" });
  server.registerTool(
    "whoami",
    {
      description: "Says whose token this is.",
      outputSchema: { sub: z.string() },
    },
    ({ authInfo }: { authInfo?: AuthInfo }) => {
      const sub = String(authInfo?.extra?.sub);
      return { content: [{ type: "text", text: sub }], structuredContent: { sub } };
    },
  );
  server.registerTool(
    "echo",
    { description: "Says it back.", inputSchema: { text: z.string() } },
    ({ text }: { text: string }) => ({ content: [{ type: "text", text }] }),
  );
  if (notes) {
    server.registerTool(
      "write_note",
      { description: "Keeps a note (needs the step-up scope).", inputSchema: { text: z.string() } },
      ({ text }: { text: string }) => ({ content: [{ type: "text", text: `noted: ${text}` }] }),
    );
  }
  return server;
}

/** A JWT access token of the provider for this resource: signature, issuer, audience, expiry. */
async function verifyAccessToken(
  token: string,
  keys: ReturnType<typeof createRemoteJWKSet>,
  issuer: string,
  mcpUrl: string,
): Promise<AuthInfo> {
  try {
    const { payload } = await jwtVerify(token, keys, {
      issuer,
      audience: mcpUrl,
      typ: "at+jwt",
      requiredClaims: ["exp", "sub", "client_id"],
    });
    return {
      token,
      clientId: String(payload.client_id),
      scopes: typeof payload.scope === "string" ? payload.scope.split(" ") : [],
      expiresAt: payload.exp,
      resource: new URL(mcpUrl),
      extra: { sub: payload.sub },
    };
  } catch (error) {
    throw new InvalidTokenError(`The access token is not valid: ${(error as Error).message}`);
  }
}

/**
 * Follows the provider's redirects and submits its login and consent forms (devInteractions),
 * with the cookies it sets, until it redirects away from itself.
 */
async function signIn(issuer: string, authorizationUrl: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  let request: { url: URL; method: "GET" | "POST"; body?: URLSearchParams } = {
    url: new URL(authorizationUrl),
    method: "GET",
  };
  for (let step = 0; step < 20; step++) {
    if (request.url.origin !== new URL(issuer).origin) return request.url;
    const response = await fetch(request.url, {
      method: request.method,
      redirect: "manual",
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
      ...(request.body ? { body: request.body } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get("location");
    const html = await response.text();
    if (location !== null) {
      request = { url: new URL(location, request.url), method: "GET" };
      continue;
    }
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (response.status !== 200 || !form) {
      throw new Error(
        `the provider answered ${response.status} without a form: ${html.slice(0, 500)}`,
      );
    }
    const body = new URLSearchParams();
    for (const input of form[2]!.matchAll(/<input[^>]*name="([^"]+)"[^>]*>/g)) {
      const name = input[1]!;
      const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? "";
      body.set(name, name === "login" ? login : name === "password" ? "any" : value);
    }
    request = {
      url: new URL(form[1]!.replaceAll("&amp;", "&"), request.url),
      method: "POST",
      body,
    };
  }
  throw new Error("the provider did not redirect back within 20 steps");
}

function listen(): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function port(server: Server): number {
  return (server.address() as AddressInfo).port;
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}
