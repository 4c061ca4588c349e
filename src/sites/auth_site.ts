/**
 * {auth_url}: the onboarding MCP endpoint and its guide, the people's pages (sign-up,
 * sign-in, account, approvals) and the OAuth authorization server. Every path is declared
 * here, with its CORS policy; each part provides the handlers.
 */
import type { EmailLinks } from "../accounts/email_links.ts";
import type { Accounts, Sessions } from "../accounts/model.ts";
import { createAccountRoutes } from "../accounts/routes.ts";
import type { Config } from "../config/config.ts";
import { type CorsPolicies, withCors } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import type { Limiters } from "../http/rate_limits.ts";
import type { LogSink } from "../http/request_log.ts";
import { createRouter, type RouterOptions, type RouteTable } from "../http/router.ts";
import type { StaticAsset } from "../http/static_asset.ts";
import { type McpMetrics, mcpRoute } from "../mcp/transport.ts";
import { getGrant, listGrantsOfAccount } from "../oauth/grants.ts";
import { OAUTH_PATHS } from "../oauth/issuer.ts";
import { withOAuthOutage } from "../oauth/oauth_error.ts";
import { checkMetadataRoutes, metadataPaths } from "../oauth/metadata.ts";
import type { OAuthMetrics } from "../oauth/oauth_metrics.ts";
import { createOAuthRoutes } from "../oauth/routes.ts";
import type { ScopeCatalogue } from "../oauth/scopes.ts";
import type { SigningKeys } from "../oauth/signing_keys.ts";
import type { Store } from "../store/store.ts";
import { createOnboardingRoutes } from "../onboarding/routes.ts";
import { assetHandler, loadCopyScript } from "../ui/stylesheet.ts";
import { createWorkspaceAccountSection } from "../workspace/pages/account_section.ts";
import { createApprovalRoutes } from "../workspace/pages/approval_routes.ts";
import { createAuditRoutes } from "../workspace/pages/audit_routes.ts";
import { createInviteRoutes } from "../workspace/pages/invite_routes.ts";
import { storedClientName } from "../oauth/clients.ts";
import { revokeGrantWithAudit } from "../workspace/domain/grant_revocation.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";
import type { ConnectRoutes } from "../gateway/connect/routes.ts";
import type { Connections } from "../gateway/connect/connections.ts";
import type { UpstreamSet } from "../gateway/upstream_set.ts";
import { createServerInventory } from "../gateway/servers/inventory.ts";
import { createServersRoutes } from "../gateway/servers/routes.ts";
import { html } from "../ui/html.ts";
import { authPage } from "../ui/auth_pages.ts";
import { type ErrorPageSite, htmlErrorAnswers, withOutagePage } from "../ui/error_pages.ts";
import { withMcpNearMiss } from "../mcp/near_miss.ts";
import { mcpServers } from "../mcp/servers.ts";
import { discoveryRoute, serverCardHandler } from "../content/server_cards.ts";

export interface AuthSiteDeps {
  readonly config: Pick<
    Config,
    | "baseUrl"
    | "authUrl"
    | "apiUrl"
    | "mcpPageSize"
    | "mcpResponse"
    | "readTimeoutMs"
    | "cimdAllowLoopback"
  >;
  readonly store: Store;
  readonly now: () => number;
  readonly log: LogSink;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly emailLinks: EmailLinks;
  readonly keys: SigningKeys;
  readonly workspace: WorkspaceServices;
  readonly cors: CorsPolicies;
  readonly stylesheet: StaticAsset;
  readonly oauthMetrics?: OAuthMetrics | undefined;
  /** The onboarding endpoint's. */
  readonly mcpMetrics?: McpMetrics | undefined;
  readonly limiters: Limiters;
  /** The spec's scopes and the upstreams'. */
  readonly scopes: ScopeCatalogue;
  /** People's connections to per-person upstreams; none without an upstream key file. */
  readonly connect?: ConnectRoutes | undefined;
  /** The live upstreams, for the servers page; none when the site is built without them. */
  readonly gateway?: Pick<UpstreamSet, "upstreams"> | undefined;
  /** People's upstream connections, for the servers page; null without an upstream key file. */
  readonly connections?: Connections | null | undefined;
}

export async function createAuthSite(deps: AuthSiteDeps): Promise<Handler> {
  const routes = await authSiteRoutes(deps);
  // Start-up self-check: every metadata location and every endpoint it names is served.
  await checkMetadataRoutes(deps.config, routes, deps.scopes);
  const site = _errorSite(deps.config);
  return withOutagePage(createRouter(routes, _errorAnswers(deps.config, site)), site, deps.log);
}

/** The frame and the ways on of the pages that say something went wrong. */
function _errorSite(config: AuthSiteDeps["config"]): ErrorPageSite {
  const base = config.baseUrl;
  return {
    frame: (title, main) => authPage({ title, main }),
    next: [
      { href: "/account", label: "Your account" },
      { href: "/sign-in", label: "Sign in" },
      { href: "/agents", label: "Connect an agent" },
      { href: `${base}/`, label: "The public website" },
      { href: `${base}/developers`, label: "The developer page" },
    ],
  };
}

/** Unknown paths and wrong methods: a near-miss MCP path, a page for a browser, else text. */
function _errorAnswers(config: AuthSiteDeps["config"], site: ErrorPageSite): RouterOptions {
  const errors = htmlErrorAnswers(site);
  return { ...errors, notFound: withMcpNearMiss(config, errors.notFound) };
}

/** Every path of {auth_url}. */
export async function authSiteRoutes(deps: AuthSiteDeps): Promise<RouteTable> {
  const { config, store, cors, workspace } = deps;
  const onboarding = await createOnboardingRoutes(deps);
  const clientName = (clientId: string) => storedClientName(store, clientId);
  const workspaceSection = createWorkspaceAccountSection({
    ...workspace,
    accounts: deps.accounts,
    clientName,
  });
  const approvals = createApprovalRoutes({
    ...deps,
    gates: workspace.gates,
    definitionBatches: workspace.definitionBatches,
    workspace: workspace.workspace,
  });
  const oauth = await createOAuthRoutes({ ...deps, upstreamSignIns: deps.connect?.signIns });
  const connect = deps.connect;
  const people = createAccountRoutes({
    ...deps,
    grants: {
      listForAccount: (accountId) => listGrantsOfAccount(store, accountId),
      async revokeForAccount(accountId, grantId) {
        // Only the account's own grants: a forged grant id of someone else's revokes nothing.
        const grant = await getGrant(store, grantId);
        if (!grant || grant.accountId !== accountId) return null;
        await revokeGrantWithAudit(store, workspace.audit, grant, {
          actor: "human",
          action: "revoke_grant",
          summary: `revoked the access of ${grant.clientName} on /account`,
        });
        deps.oauthMetrics?.grantRevoked("account");
        return { clientName: grant.clientName, businessId: grant.businessId };
      },
    },
    businessSection: async (businessId, role, accountId) => ({
      ...(await workspaceSection(businessId, role)),
      connections: await deps.connect?.section(businessId, role, accountId) ?? html``,
    }),
    describeReturn: [oauth.waiting, approvals.waiting, ...(connect ? [connect.waiting] : [])],
    returnTargets: connect ? [connect.leadsTo] : [],
  });
  const audit = createAuditRoutes({
    ...deps,
    audit: workspace.audit,
    clientName,
  });
  const invite = createInviteRoutes({
    ...deps,
    workspace: workspace.workspace,
    mailer: workspace.mailer,
    audit: workspace.audit,
    authUrl: config.authUrl,
  });
  const servers = createServersRoutes({
    ...deps,
    inventory: createServerInventory({
      upstreams: () => deps.gateway?.upstreams ?? [],
      pins: workspace.workspace.upstreamPins,
      connections: deps.connections ?? null,
    }),
    connectable: (deps.connections ?? null) !== null,
  });
  const metadata = withCors(cors.open, { GET: oauth.metadata });
  return {
    "/assets/style.css": { GET: assetHandler(deps.stylesheet) },
    "/assets/copy.js": { GET: assetHandler(await loadCopyScript()) },

    // Onboarding, no credentials: the MCP endpoint, and the connection guide as text and page.
    "/mcp": mcpRoute(onboarding.mcp, cors.mcp, deps.mcpMetrics),
    // Its Server Card, for discovery by domain (content/server_cards.ts).
    "/mcp/server-card": discoveryRoute(await serverCardHandler(mcpServers(config).onboarding)),
    "/llms.txt": { GET: onboarding.guideText },
    "/agents": { GET: onboarding.guidePage },

    // People: sign-up and sign-in by e-mailed link, the account page, approvals of gated calls.
    "/": people.home,
    "/sign-up": people.signUp,
    "/sign-in": people.signIn,
    "/sign-in/verify": people.verify,
    "/sign-out": people.signOut,
    "/account": people.account,
    "/account/audit": audit.page,
    "/account/servers": servers.page,
    "/account/members": invite.members,
    "/approvals": approvals.list,
    "/approvals/*": approvals.gate,
    ...(connect === undefined ? {} : {
      // People's own accounts of per-person upstreams; the client document is anyone's to read.
      "/connections/client.json": withCors(cors.open, connect.clientDocument),
      "/connections/callback": connect.callback,
      "/connections/*": connect.upstream,
    }),

    // The authorization server, issuer {auth_url}/api/auth. Discovery, JWKS and registration
    // answer any origin, token and revocation only trusted ones, and the authorization
    // endpoint and the consent form none (DESIGN.md, CORS).
    ...Object.fromEntries(metadataPaths(config).map((path) => [path, metadata])),
    [OAUTH_PATHS.jwks]: withCors(cors.open, { GET: oauth.jwks }),
    [OAUTH_PATHS.authorize]: { GET: oauth.authorize },
    [OAUTH_PATHS.consent]: { POST: oauth.consent },
    [OAUTH_PATHS.register]: withCors(cors.open, {
      POST: withOAuthOutage(oauth.register, deps.log),
    }),
    [OAUTH_PATHS.token]: withCors(cors.client, { POST: withOAuthOutage(oauth.token, deps.log) }),
    [OAUTH_PATHS.revoke]: withCors(cors.client, { POST: withOAuthOutage(oauth.revoke, deps.log) }),
  };
}
