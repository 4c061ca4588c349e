// Small OAuth servers on loopback for the connect tests, written here so each test says what
// the upstream answers; plus a fetch that records every URL asked for, a DNS table, and the
// documents, clock and client the discovery and OAuth client tests share.
import type { ResolveDns } from "../../../src/oauth/addresses.ts";
import type { AuthorizationServer, DiscoveryDeps } from "../../../src/gateway/connect/discovery.ts";
import type { ClientCredentials } from "../../../src/gateway/connect/oauth_client.ts";

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Headers;
  readonly body: string;
}

export type Route = (request: Request, origin: string) => Response | Promise<Response>;

export interface FakeServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** Requests in arrival order, the path with its query. */
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/** A server answering `routes[path]` (path with query) and 404 to everything else. */
export function serveFake(routes: Record<string, Route>): FakeServer {
  const seen: SeenRequest[] = [];
  let origin = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const url = new URL(request.url);
      const path = url.pathname + url.search;
      const body = await request.text();
      seen.push({ method: request.method, path, headers: request.headers, body });
      const route = routes[path];
      return route ? await route(request, origin) : new Response("not here", { status: 404 });
    },
  );
  origin = `http://127.0.0.1:${server.addr.port}`;
  return { origin, seen, close: () => server.shutdown() };
}

/** The JSON answer of a route, computed when asked, since the origin is known only then. */
export const json = (body: (origin: string) => unknown, status = 200): Route => (_r, origin) =>
  Response.json(body(origin), { status });

export function resourceMetadata(
  resource: string,
  issuer: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { resource, authorization_servers: [issuer], ...extra };
}

export function serverMetadata(
  issuer: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const origin = new URL(issuer).origin;
  return {
    issuer,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    revocation_endpoint: `${origin}/revoke`,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic"],
    ...extra,
  };
}

/** The global fetch, with every URL asked for written down first. */
export function recordingFetch(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const recording = ((input: string | URL | Request, init?: RequestInit) => {
    urls.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: recording, urls };
}

/** A DNS that knows only `table`; other names resolve to nothing. */
export function fakeDns(table: Record<string, string[]>): ResolveDns {
  return (host, type) =>
    Promise.resolve((table[host] ?? []).filter((a) => (type === "AAAA") === a.includes(":")));
}

/** A discovered server at `origin`, as discovery would describe the fake one. */
export function fakeAuthorizationServer(
  origin: string,
  extra: Partial<AuthorizationServer> = {},
): AuthorizationServer {
  return {
    issuer: origin,
    authorizationEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    registrationEndpoint: `${origin}/register`,
    revocationEndpoint: `${origin}/revoke`,
    clientIdMetadataDocumentSupported: false,
    issParameterSupported: false,
    tokenEndpointAuthMethods: ["none", "client_secret_basic"],
    ...extra,
  };
}

/** Runs `body` while noting each time budget asked of AbortSignal.timeout, with its signal. */
export async function recordTimeouts(
  body: () => Promise<unknown>,
): Promise<{ ms: number; signal: AbortSignal }[]> {
  const timeout = AbortSignal.timeout;
  const asked: { ms: number; signal: AbortSignal }[] = [];
  AbortSignal.timeout = (ms: number) => {
    const signal = timeout(ms);
    asked.push({ ms, signal });
    return signal;
  };
  try {
    await body();
  } finally {
    AbortSignal.timeout = timeout;
  }
  return asked;
}

/** The stopped clock of the OAuth client tests, in ms since the epoch. */
export const NOW = 1_800_000_000_000;
/** OAuth client dependencies whose clock reads `NOW`. */
export const deps = { now: () => NOW };
/** A public client: no secret, authenticating with `none`. */
export const PUBLIC: ClientCredentials = {
  clientId: "vestibule",
  clientSecret: null,
  authMethod: "none",
};
/** The protected resource, an MCP server, that tokens are asked for. */
export const RESOURCE = "https://mcp.example/mcp";
/** An authorization code that stands out should it ever show in a message. */
export const SECRET_CODE = "code-8f3a-never-shown";

/** The protected-resource metadata's well-known path. */
export const PRM = "/.well-known/oauth-protected-resource";
/** The OAuth authorization server metadata's well-known path. */
export const OAUTH_AS = "/.well-known/oauth-authorization-server";

/** An authorization server at its own origin plus an upstream MCP server naming it. */
export function twoServers(
  upstreamRoutes: (issuer: string) => Record<string, Route>,
  serverRoutes: Record<string, Route> = { [OAUTH_AS]: json((o) => serverMetadata(o)) },
): { upstream: FakeServer; as: FakeServer; close: () => Promise<void> } {
  const as = serveFake(serverRoutes);
  const upstream = serveFake(upstreamRoutes(as.origin));
  return { upstream, as, close: () => Promise.all([as.close(), upstream.close()]).then(() => {}) };
}

/** Discovery dependencies that allow loopback and resolve no names. */
export const loopback: DiscoveryDeps = { allowLoopback: true, resolveDns: fakeDns({}) };
