/**
 * Authorization-server metadata (RFC 8414, with the OpenID Connect Discovery fields): one
 * document, served at every location real clients try. Built from configuration only,
 * never from Host.
 */
import type { Config } from "../config/config.ts";
import type { Handler } from "../http/handler.ts";
import type { Method, RouteTable } from "../http/router.ts";
import { followingJsonHandler } from "../http/static_asset.ts";
import { issuerOf, OAUTH_PATHS } from "./issuer.ts";
import type { ScopeCatalogue } from "./scopes.ts";

export function metadataDocument(
  config: Pick<Config, "authUrl">,
  scopes: ScopeCatalogue,
): Record<string, unknown> {
  const issuer = issuerOf(config);
  const at = (path: string) => `${config.authUrl}${path}`;
  return {
    issuer,
    authorization_endpoint: at(OAUTH_PATHS.authorize),
    token_endpoint: at(OAUTH_PATHS.token),
    registration_endpoint: at(OAUTH_PATHS.register),
    revocation_endpoint: at(OAUTH_PATHS.revoke),
    jwks_uri: at(OAUTH_PATHS.jwks),
    scopes_supported: scopes.supported,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    revocation_endpoint_auth_methods_supported: [
      "none",
      "client_secret_basic",
      "client_secret_post",
    ],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    prompt_values_supported: ["none", "consent"],
    // OpenID Connect Discovery 1.0 §3.
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["ES256"],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "email", "name"],
    service_documentation: `${config.authUrl}/agents`,
  };
}

/**
 * Where the document is looked for: RFC 8414 §3.1 inserts the well-known segment between
 * host and issuer path; OpenID Connect Discovery appends it; clients try both, for both names.
 */
export function metadataPaths(config: Pick<Config, "authUrl">): string[] {
  const issuerPath = new URL(issuerOf(config)).pathname;
  return [
    `/.well-known/oauth-authorization-server${issuerPath}`,
    `${issuerPath}/.well-known/oauth-authorization-server`,
    `/.well-known/openid-configuration${issuerPath}`,
    `${issuerPath}/.well-known/openid-configuration`,
  ];
}

/** The handler answering every metadata location; its scopes follow a reload's. */
export function createMetadataHandler(
  config: Pick<Config, "authUrl">,
  scopes: ScopeCatalogue,
): Promise<Handler> {
  return followingJsonHandler(
    () => scopes.supported,
    () => metadataDocument(config, scopes),
    { cacheControl: "public, max-age=300" },
  );
}

/** The locations DESIGN.md lists, spelled out rather than derived, so that a drift shows. */
const DESIGN_LOCATIONS = [
  "/.well-known/oauth-authorization-server/api/auth",
  "/api/auth/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration/api/auth",
  "/api/auth/.well-known/openid-configuration",
];

/**
 * The start-up self-check: fetches nothing, but asks the route table itself, in memory,
 * for the document at every location DESIGN.md lists; each must answer 200 with the very
 * same document, and every endpoint the document names must be a route of the table.
 * A mismatch stops start-up.
 */
export async function checkMetadataRoutes(
  config: Pick<Config, "authUrl">,
  routes: RouteTable,
  scopes: ScopeCatalogue,
): Promise<void> {
  const expected = JSON.stringify(metadataDocument(config, scopes));
  const fail = (why: string) => {
    throw new Error(`OAuth metadata self-check failed: ${why}`);
  };
  for (const path of DESIGN_LOCATIONS) {
    const handler = routes[path]?.GET;
    if (!handler) fail(`nothing answers GET ${path}`);
    const response = await handler!(new Request(`${config.authUrl}${path}`), {
      clientAddress: "self-check",
    });
    const body = await response.text();
    if (response.status !== 200 || body !== expected) fail(`${path} serves another document`);
  }
  const document = metadataDocument(config, scopes);
  const endpoints: [string, Method][] = [
    ["authorization_endpoint", "GET"],
    ["token_endpoint", "POST"],
    ["registration_endpoint", "POST"],
    ["revocation_endpoint", "POST"],
    ["jwks_uri", "GET"],
  ];
  for (const [field, method] of endpoints) {
    const url = new URL(String(document[field]));
    if (url.origin !== config.authUrl || !routes[url.pathname]?.[method]) {
      fail(`${field} ${url.href} is not served`);
    }
  }
}
