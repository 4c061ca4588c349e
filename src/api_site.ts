import type { AppDeps } from "./app.ts";
import type { Handler } from "./http/handler.ts";
import { createRouter } from "./http/router.ts";
import { workspaceApiRoutes } from "./workspace/api_routes.ts";

/** {api_url}: the protected-resource metadata and the workspace MCP endpoint. */
export async function createApiSite(deps: AppDeps): Promise<Handler> {
  return createRouter(await workspaceApiRoutes(deps));
}
