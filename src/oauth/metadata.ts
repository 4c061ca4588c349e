/**
 * Authorization-server metadata (RFC 8414, with the OpenID Connect Discovery fields): one
 * document, served at every location real clients try. Built from configuration only,
 * never from Host.
 */
import type { Config } from "../config.ts";
import type { Handler } from "../http/handler.ts";
import { createStaticAsset, serveStaticAsset } from "../http/static_asset.ts";
import { ISSUER_PATH, issuerOf, OAUTH_PATHS } from "./issuer.ts";
import { SUPPORTED_SCOPES } from "./scopes.ts";

export function metadataDocument(config: Config): Record<string, unknown> {
  const issuer = issuerOf(config);
  const at = (path: string) => `${config.authUrl}${path}`;
  return {
    issuer,
    authorization_endpoint: at(OAUTH_PATHS.authorize),
    token_endpoint: at(OAUTH_PATHS.token),
    registration_endpoint: at(OAUTH_PATHS.register),
    revocation_endpoint: at(OAUTH_PATHS.revoke),
    jwks_uri: at(OAUTH_PATHS.jwks),
    scopes_supported: SUPPORTED_SCOPES,
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
export function metadataPaths(config: Config): string[] {
  const issuerPath = new URL(issuerOf(config)).pathname;
  return [
    `/.well-known/oauth-authorization-server${issuerPath}`,
    `${issuerPath}/.well-known/oauth-authorization-server`,
    `/.well-known/openid-configuration${issuerPath}`,
    `${issuerPath}/.well-known/openid-configuration`,
  ];
}

/**
 * The handler answering every metadata location. The start-up self-check compares, in
 * memory, the locations derived from the issuer with the routes DESIGN.md lists and the
 * document's endpoints with the routes served; a mismatch stops start-up.
 */
export async function createMetadataHandler(config: Config): Promise<Handler> {
  const document = metadataDocument(config);
  _selfCheck(config, document);
  const asset = await createStaticAsset(JSON.stringify(document), "application/json");
  return (request) =>
    Promise.resolve(
      serveStaticAsset(request, asset, { cacheControl: "public, max-age=300" }),
    );
}

function _selfCheck(config: Config, document: Record<string, unknown>): void {
  const expected = [
    "/.well-known/oauth-authorization-server/api/auth",
    "/api/auth/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration/api/auth",
    "/api/auth/.well-known/openid-configuration",
  ];
  const derived = metadataPaths(config);
  const issuer = issuerOf(config);
  const endpoints = [
    document.authorization_endpoint,
    document.token_endpoint,
    document.registration_endpoint,
    document.revocation_endpoint,
    document.jwks_uri,
  ];
  const ok = derived.every((p, i) => p === expected[i]) &&
    document.issuer === issuer && issuer.endsWith(ISSUER_PATH) &&
    endpoints.every((e) => typeof e === "string" && e.startsWith(`${issuer}/`));
  if (!ok) throw new Error("OAuth metadata self-check failed: locations or endpoints disagree");
}
