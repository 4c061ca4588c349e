/**
 * What the authorization server answers on {auth_url} (auth_site.ts maps the paths, from
 * OAUTH_PATHS and `metadataPaths`, and applies their CORS policies), built once.
 */
import type { Accounts, Sessions } from "../accounts/model.ts";
import type { Config } from "../config/config.ts";
import type { Handler } from "../http/handler.ts";
import type { Limiters } from "../http/rate_limits.ts";
import { jsonResponse } from "../http/responses.ts";
import type { Store } from "../store/store.ts";
import { createAccessTokenGrantReader } from "./access_token.ts";
import { createAuthorizeEndpoint, describeAuthorization } from "./authorize.ts";
import type { ReturnDescriber } from "../ui/auth_pages.ts";
import { createMetadataDocuments } from "./cimd.ts";
import { createClients } from "./clients.ts";
import { createConsentEndpoint } from "./consent.ts";
import { issuerOf } from "./issuer.ts";
import { createMetadataHandler } from "./metadata.ts";
import type { OAuthMetrics } from "./oauth_metrics.ts";
import type { ScopeCatalogue } from "./scopes.ts";
import type { UpstreamSignIns } from "./consent_continuation.ts";
import { createRegistrationEndpoint } from "./registration.ts";
import { createRevocationEndpoint } from "./revocation.ts";
import type { SigningKeys } from "./signing_keys.ts";
import { createTokenEndpoint } from "./token_endpoint.ts";
import { createTokenSigner } from "./tokens.ts";

export interface OAuthRoutesDeps {
  readonly config: Pick<
    Config,
    "authUrl" | "apiUrl" | "cimdAllowLoopback"
  >;
  readonly store: Store;
  readonly now: () => number;
  readonly keys: SigningKeys;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly oauthMetrics?: OAuthMetrics | undefined;
  readonly limiters: Limiters;
  /** The spec's scopes and the upstreams' (src/oauth/scopes.ts). */
  readonly scopes: ScopeCatalogue;
  /** Per-person upstreams a consent connects before the agent gets its code. */
  readonly upstreamSignIns?: UpstreamSignIns | undefined;
}

export interface OAuthRoutes {
  /** GET at every metadata location (RFC 8414, OpenID Connect Discovery). */
  readonly metadata: Handler;
  readonly jwks: Handler;
  /** GET: never CORS. */
  readonly authorize: Handler;
  /** Says on the sign-in page which application's authorization waits behind it. */
  readonly waiting: ReturnDescriber;
  /** POST of the business and consent forms. */
  readonly consent: Handler;
  readonly register: Handler;
  readonly token: Handler;
  readonly revoke: Handler;
}

export async function createOAuthRoutes(deps: OAuthRoutesDeps): Promise<OAuthRoutes> {
  const { config, store, now, keys, limiters } = deps;
  await keys.current(); // the key is generated on first start, not on the first request
  const signer = createTokenSigner({ config, keys, now });
  const clients = createClients({
    store,
    now,
    documents: createMetadataDocuments({
      config,
      now,
      budget: limiters.local("cimd"),
      scopes: deps.scopes,
    }),
    issuer: issuerOf(config),
  });
  const budgets = {
    client: limiters.shared("token"),
    failure: limiters.local("token-failure"),
  };
  const pages = { ...deps, clients };
  return {
    metadata: await createMetadataHandler(config, deps.scopes),
    jwks: async () =>
      jsonResponse(await keys.jwks(), { headers: { "Cache-Control": "public, max-age=300" } }),
    authorize: createAuthorizeEndpoint(pages),
    waiting: describeAuthorization(pages),
    consent: createConsentEndpoint(pages),
    register: createRegistrationEndpoint({
      clients,
      limiter: limiters.shared("registration"),
      scopes: deps.scopes,
    }),
    token: createTokenEndpoint({ ...deps, signer, clients, budgets }),
    revoke: createRevocationEndpoint({
      store,
      clients,
      budgets,
      accessTokenGrant: createAccessTokenGrantReader({ keys, issuer: issuerOf(config) }),
      oauthMetrics: deps.oauthMetrics,
    }),
  };
}
