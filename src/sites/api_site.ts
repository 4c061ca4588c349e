/** {api_url}: the workspace resource server. */
import type { Accounts } from "../accounts/model.ts";
import { type CorsPolicies, withCors } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import type { Limiters } from "../http/rate_limits.ts";
import type { LogSink } from "../http/request_log.ts";
import { createRouter, plainNotFound } from "../http/router.ts";
import { type McpMetrics, mcpRoute } from "../mcp/transport.ts";
import { withMcpNearMiss } from "../mcp/near_miss.ts";
import { mcpServers } from "../mcp/servers.ts";
import { discoveryRoute, serverCardHandler } from "../content/server_cards.ts";
import type { SigningKeys } from "../oauth/signing_keys.ts";
import type { Store } from "../store/store.ts";
import { createWorkspaceRoutes, type WorkspaceRoutesDeps } from "../workspace/mcp/routes.ts";
import type { WorkspaceServices } from "../workspace/domain/services.ts";

export interface ApiSiteDeps {
  readonly config: WorkspaceRoutesDeps["config"];
  readonly store: Store;
  readonly now: () => number;
  readonly log: LogSink;
  readonly accounts: Accounts;
  readonly keys: SigningKeys;
  readonly workspace: WorkspaceServices;
  readonly cors: CorsPolicies;
  readonly mcpMetrics?: McpMetrics | undefined;
  readonly limiters: Limiters;
  readonly scopes: WorkspaceRoutesDeps["scopes"];
  readonly upstreamTools?: WorkspaceRoutesDeps["upstreamTools"];
  readonly elicitations?: WorkspaceRoutesDeps["elicitations"];
}

export async function createApiSite(deps: ApiSiteDeps): Promise<Handler> {
  const { cors } = deps;
  const workspace = await createWorkspaceRoutes({ ...deps, services: deps.workspace });
  return createRouter({
    // RFC 9728: where clients find the authorization server of this resource.
    "/.well-known/oauth-protected-resource": withCors(cors.open, {
      GET: workspace.resourceMetadata,
    }),
    // The workspace MCP endpoint: bearer token with app.access, then one scope per tool.
    "/api/mcp": mcpRoute(workspace.mcp, cors.mcp, deps.mcpMetrics),
    // Its Server Card: public words and the OAuth it needs, never a credential.
    "/api/mcp/server-card": discoveryRoute(
      await serverCardHandler(mcpServers(deps.config).workspace),
    ),
  }, { notFound: withMcpNearMiss(deps.config, plainNotFound) });
}
