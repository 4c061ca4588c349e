import type { AppDeps } from "./app.ts";
import type { Handler } from "./http/handler.ts";
import { createRouter } from "./http/router.ts";

/** {api_url}: the protected-resource metadata and the workspace MCP endpoint. */
export function createApiSite(deps: AppDeps): Promise<Handler> {
  void deps;
  return Promise.resolve(createRouter({}));
}
