/**
 * What the workspace answers on {api_url} (api_site.ts maps the paths): the protected-resource
 * metadata (RFC 9728) and the workspace MCP endpoint. Authentication wraps the MCP endpoint
 * from outside (the endpoint's `access`): the bearer checks run before any JSON-RPC is read, and
 * the MCP code only ever sees a verified `WorkspaceAuth`.
 */
import type { Tracing } from "../../tracing/tracing.ts";
import * as v from "valibot";
import type { Accounts } from "../../accounts/model.ts";
import type { Config } from "../../config/config.ts";
import type { Handler } from "../../http/handler.ts";
import type { Limiters } from "../../http/rate_limits.ts";
import type { LogSink } from "../../http/request_log.ts";
import { followingJsonHandler } from "../../http/static_asset.ts";
import type { UrlElicitations } from "../../mcp/elicitation.ts";
import { createMcpEndpoint } from "../../mcp/endpoint.ts";
import { type McpMetrics, tooManyRequests } from "../../mcp/transport.ts";
import { mcpServers } from "../../mcp/servers.ts";
import { createSharedCancels } from "../../mcp/shared_cancels.ts";
import { createAccessTokenVerifier } from "../../oauth/access_token.ts";
import { issuerOf } from "../../oauth/issuer.ts";
import { OAuthError, oauthErrorResponse } from "../../oauth/oauth_error.ts";
import type { ScopeCatalogue } from "../../oauth/scopes.ts";
import type { SigningKeys } from "../../oauth/signing_keys.ts";
import { noteStepUp } from "../../oauth/step_up.ts";
import { ProtectedResourceSchema } from "../../oauth/wire_schemas.ts";
import type { Store } from "../../store/store.ts";
import { bearerChallenge, createBearerAuth, type WorkspaceAuth } from "./bearer.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { createWorkspaceTools } from "./catalogue.ts";
import { createGateTasks } from "./gate_tasks.ts";
import type { AnyWorkspaceTool, CallerTools, UpstreamTools } from "./scoped_tool.ts";
import { BoundedMap } from "../../bounded_map.ts";
import { createToolRegistry, type ToolRegistry } from "../../mcp/registry.ts";
import { joinTaskHosts } from "../../mcp/tasks.ts";

export interface WorkspaceRoutesDeps {
  readonly config: Pick<
    Config,
    | "baseUrl"
    | "authUrl"
    | "apiUrl"
    | "mcpPageSize"
    | "mcpResponse"
    | "readTimeoutMs"
    | "workspaceMaxBody"
    | "workspaceTools"
  >;
  /** The grants and the signing keys behind the access tokens. */
  readonly store: Store;
  readonly keys: SigningKeys;
  readonly accounts: Accounts;
  readonly services: WorkspaceServices;
  readonly now: () => number;
  readonly log: LogSink;
  readonly mcpMetrics?: McpMetrics | undefined;
  readonly tracing?: Tracing | undefined;
  readonly limiters: Limiters;
  readonly scopes: ScopeCatalogue;
  /** The upstream MCP servers' tools (VESTIBULE_UPSTREAMS); none when left out. */
  readonly upstreamTools?: UpstreamTools | undefined;
  /** URL elicitation (elicitations.ts): only where people connect their own upstream accounts. */
  readonly elicitations?: UrlElicitations<WorkspaceAuth> | undefined;
}

export interface WorkspaceRoutes {
  /** GET /.well-known/oauth-protected-resource */
  readonly resourceMetadata: Handler;
  /** POST /api/mcp: bearer authentication, then the MCP endpoint. */
  readonly mcp: Handler;
}

export async function createWorkspaceRoutes(deps: WorkspaceRoutesDeps): Promise<WorkspaceRoutes> {
  const { config, now } = deps;
  const authenticate = createBearerAuth({
    config,
    accounts: deps.accounts,
    verify: createAccessTokenVerifier({
      keys: deps.keys,
      store: deps.store,
      now,
      issuer: issuerOf(config),
      audience: config.apiUrl,
    }),
    now,
    verifyLimiter: deps.limiters.local("workspace-verify"),
  });
  // A workspace request, top to bottom: the bearer token (one verification per token at a time),
  // the caller's rate limit, the media types and body, the tool's scope, the dispatcher, the tool.
  const tools = createWorkspaceTools(deps.services, config.workspaceTools);
  const mcp = createMcpEndpoint<WorkspaceAuth, AnyWorkspaceTool>({
    tools,
    ...(deps.upstreamTools
      ? {
        catalogue: _withUpstreams(tools, deps.upstreamTools, config),
        // An upstream may change its tools (and an owner approve them) at any time.
        catalogueTtlMs: UPSTREAM_CATALOGUE_TTL_MS,
      }
      : {}),
    config,
    sharedCancels: createSharedCancels({ store: deps.store, now }),
    maxBodyBytes: config.workspaceMaxBody,
    access: {
      async authenticate(request, context) {
        const outcome = await authenticate(request, context.clientAddress);
        if (outcome.ok) {
          const { auth } = outcome;
          return { auth, rateKey: `${auth.accountId}:${auth.clientId}` };
        }
        if (outcome.error !== null) return oauthErrorResponse(outcome.error);
        return tooManyRequests(outcome.retryAfterSeconds);
      },
      async mayCall(tool, auth) {
        const refusal = _checkToolScope(config, deps.scopes, tool, auth);
        // A step-up challenge: the grant's next refresh then sends the client to the person
        // (oauth/step_up.ts). A plain 403 (a role consent cannot change) notes nothing.
        if (refusal?.headers.has("WWW-Authenticate")) {
          await noteStepUp(deps.store, auth.grantId, [tool.scope], now());
        }
        return refusal;
      },
    },
    rateLimiter: deps.limiters.local("workspace"),
    serverInfo: mcpServers(config).workspace.info,
    // Behind a token, and with upstreams the list depends on the caller's business and role:
    // no cache may share it across authorization contexts.
    cacheScope: "private",
    instructions:
      "Business tools for the one business this token is for. Start with get_agent_connection_setup and follow nextAction. Each tool names the scope it needs; ask your human before requesting more. Gated tools only prepare an approval: tell the human to open approvalUrl, and read the result with get_approval.",
    log: deps.log,
    metrics: deps.mcpMetrics,
    tracing: deps.tracing,
    tasks: deps.upstreamTools?.tasks
      ? joinTaskHosts(createGateTasks(deps.services, deps.store, now), deps.upstreamTools.tasks)
      : createGateTasks(deps.services, deps.store, now),
    elicitations: deps.elicitations,
  });
  return {
    // Its scopes follow a reload's.
    resourceMetadata: await followingJsonHandler(
      () => deps.scopes.resource,
      () => protectedResourceMetadata(config, deps.scopes),
      { cacheControl: "public, max-age=300" },
    ),
    mcp,
  };
}

/** How long a tools/list with upstream tools may be reused (2026-07-28 "Caching" ttlMs). */
const UPSTREAM_CATALOGUE_TTL_MS = 60_000;

/**
 * The caller's catalogue: the own tools, then the upstreams' tools the caller's business and role
 * may see; one registry per distinct set, kept while it is in use.
 */
function _withUpstreams(
  own: readonly AnyWorkspaceTool[],
  upstreamTools: UpstreamTools,
  config: Pick<Config, "mcpPageSize">,
): (auth: WorkspaceAuth) => Registry | Promise<Registry> {
  const registries = new BoundedMap<string, Registry>(1_000);
  const registryOf = ({ stamp, tools }: CallerTools) => {
    let registry = registries.get(stamp);
    if (registry === undefined) {
      registry = createToolRegistry<WorkspaceAuth, AnyWorkspaceTool>([...own, ...tools], {
        pageSize: config.mcpPageSize,
      });
      registries.set(stamp, registry);
    }
    return registry;
  };
  return (auth) => {
    const found = upstreamTools.forCaller(auth);
    return found instanceof Promise ? found.then(registryOf) : registryOf(found);
  };
}

type Registry = ToolRegistry<WorkspaceAuth, AnyWorkspaceTool>;

/** RFC 9728 §2, with the scope list of spec §5 and the issuer string of DESIGN.md. */
export function protectedResourceMetadata(
  config: Pick<Config, "apiUrl" | "authUrl" | "baseUrl">,
  scopes: ScopeCatalogue,
) {
  return v.parse(ProtectedResourceSchema, {
    resource: config.apiUrl,
    authorization_servers: [issuerOf(config)],
    scopes_supported: [...scopes.resource],
    bearer_methods_supported: ["header"],
    resource_name: "Vestibule workspace",
    resource_documentation: `${config.baseUrl}/developers`,
  });
}

/**
 * Scope per tool (RFC 6750 §3.1): a missing scope is a 403 step-up challenge whose `scope`
 * is everything the token has plus the one missing, so re-authorizing with it loses nothing
 * the resource needs (offline_access aside: see ScopeCatalogue.resource).
 * An owner-only tool called for an account that is not an owner is a plain 403 first, held
 * scope or not: consent cannot fix a role, and a challenge would send the member's agent to a
 * consent page that cannot grant it, again and again.
 */
function _checkToolScope(
  config: Pick<Config, "apiUrl">,
  scopes: ScopeCatalogue,
  tool: AnyWorkspaceTool,
  auth: WorkspaceAuth,
): Response | undefined {
  const { scope } = tool;
  if (scopes.ownerOnly(scope) && auth.role !== "owner") {
    return oauthErrorResponse(
      new OAuthError(
        "access_denied",
        `The tool ${tool.name} needs ${scope}, which only an owner of the business can grant; this account is a ${auth.role}`,
        403,
      ),
    );
  }
  if (!auth.scopes.includes(scope)) {
    const needed = [...auth.scopes, scope]
      .filter((s) => scopes.resource.includes(s))
      .join(" ");
    return oauthErrorResponse(
      new OAuthError("insufficient_scope", `The tool ${tool.name} needs the scope ${scope}`, 403, {
        "WWW-Authenticate": bearerChallenge(config, needed, "insufficient_scope"),
      }),
    );
  }
  return undefined;
}
