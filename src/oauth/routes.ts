/**
 * The authorization server's routes on {auth_url}, built once from the app's dependencies.
 * auth_site.ts spreads this table into its own.
 */
import type { AppDeps } from "../app.ts";
import { createCorsPolicies, withCors } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import { jsonResponse } from "../http/responses.ts";
import { configuredRateLimiter } from "../http/rate_limiter.ts";
import type { RouteTable } from "../http/router.ts";
import { createAccessTokenGrantReader } from "./access_token.ts";
import { createAuthorizeEndpoint } from "./authorize.ts";
import { createMetadataDocuments, type MetadataDocumentDeps } from "./cimd.ts";
import { createClients } from "./clients.ts";
import { createConsentEndpoint } from "./consent.ts";
import { issuerOf, OAUTH_PATHS } from "./issuer.ts";
import { checkMetadataRoutes, createMetadataHandler, metadataPaths } from "./metadata.ts";
import { createRegistrationEndpoint } from "./registration.ts";
import { createRevocationEndpoint } from "./revocation.ts";
import { createSigningKeys } from "./signing_keys.ts";
import { createTokenEndpoint } from "./token_endpoint.ts";
import { createTokenSigner } from "./tokens.ts";

export type OAuthDeps = Pick<AppDeps, "config" | "store" | "now" | "accounts" | "sessions">;

export interface OAuthOptions {
  /** Fetch and DNS for client metadata documents; the real ones by default. */
  readonly fetch?: MetadataDocumentDeps["fetch"];
  readonly resolveDns?: MetadataDocumentDeps["resolveDns"];
}

export async function createOAuthRoutes(
  deps: OAuthDeps,
  options: OAuthOptions = {},
): Promise<RouteTable> {
  const { config, store, now } = deps;
  const keys = createSigningKeys({ store, now });
  await keys.current(); // the key is generated on first start, not on the first request
  const signer = createTokenSigner({ config, keys, now });
  const documents = createMetadataDocuments({
    config,
    now,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.resolveDns ? { resolveDns: options.resolveDns } : {}),
  });
  const clients = createClients({ store, now, documents });
  const budgets = {
    client: configuredRateLimiter(config.rateLimits, "token", now),
    failure: configuredRateLimiter(config.rateLimits, "token-failure", now),
  };
  const authorizeDeps = { ...deps, clients };

  const cors = createCorsPolicies(config.trustedOrigins);
  const metadata = withCors(cors.open, { GET: await createMetadataHandler(config) });
  const metadataRoutes = Object.fromEntries(metadataPaths(config).map((path) => [path, metadata]));
  const jwks: Handler = async () =>
    jsonResponse(await keys.jwks(), { headers: { "Cache-Control": "public, max-age=300" } });

  const routes: RouteTable = {
    ...metadataRoutes,
    [OAUTH_PATHS.jwks]: withCors(cors.open, { GET: jwks }),
    [OAUTH_PATHS.authorize]: { GET: createAuthorizeEndpoint(authorizeDeps) },
    [OAUTH_PATHS.consent]: { POST: createConsentEndpoint(authorizeDeps) },
    [OAUTH_PATHS.register]: withCors(cors.open, {
      POST: createRegistrationEndpoint({
        clients,
        limiter: configuredRateLimiter(config.rateLimits, "registration", now),
      }),
    }),
    [OAUTH_PATHS.token]: withCors(cors.client, {
      POST: createTokenEndpoint({ ...deps, signer, clients, budgets }),
    }),
    [OAUTH_PATHS.revoke]: withCors(cors.client, {
      POST: createRevocationEndpoint({
        store,
        clients,
        budgets,
        accessTokenGrant: createAccessTokenGrantReader({ keys, issuer: issuerOf(config) }),
      }),
    }),
  };
  await checkMetadataRoutes(config, routes);
  return routes;
}
