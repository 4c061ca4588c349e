// {auth_url} routes of the onboarding work: POST /mcp, and the connection guide as
// /llms.txt (text) and /agents (HTML), all from the one guide source.
import type { AppDeps } from "../../app.ts";
import { createCorsPolicies } from "../../http/cors.ts";
import { HTML_SECURITY_HEADERS } from "../../http/security_headers.ts";
import { configuredRateLimiter } from "../../http/rate_limiter.ts";
import type { RouteTable } from "../../http/router.ts";
import { createStaticAsset, serveStaticAsset } from "../../http/static_asset.ts";
import { createMcpEndpoint, mcpRoute } from "../../mcp/endpoint.ts";
import { loadConnectionGuide, renderGuidePage, renderGuideText } from "./connection_guide.ts";
import { createOnboardingTools, type OnboardingCaller } from "./tools.ts";

/** Spec §8. */
export const ONBOARDING_MAX_BODY_BYTES = 16 * 1024;

export async function onboardingRoutes(deps: AppDeps): Promise<RouteTable> {
  const { config } = deps;
  const guide = await loadConnectionGuide(config);
  const tools = createOnboardingTools({ app: deps, guide, fetch: globalThis.fetch });
  const mcp = createMcpEndpoint<OnboardingCaller>({
    tools,
    config,
    maxBodyBytes: ONBOARDING_MAX_BODY_BYTES,
    rateLimiter: configuredRateLimiter(config.rateLimits, "onboarding", deps.now),
    serverInfo: { name: "vestibule-onboarding", title: "Vestibule onboarding", version: "1.0.0" },
    instructions:
      `Public onboarding for Vestibule; it grants no business access. Call get_connection_guide for the exact steps to reach the OAuth-protected workspace MCP at ${guide.workspaceMcpUrl}, list_scopes for the scopes, describe_service for what is offered.`,
    log: deps.log,
  });
  const text = await createStaticAsset(renderGuideText(guide), "text/plain; charset=utf-8");
  const page = await createStaticAsset(renderGuidePage(guide), "text/html; charset=utf-8");
  return {
    "/mcp": mcpRoute(
      (request, context) =>
        mcp(request, context, { clientAddress: context.clientAddress }, context.clientAddress),
      createCorsPolicies(config.trustedOrigins).mcp,
    ),
    "/llms.txt": {
      GET: (request) =>
        Promise.resolve(serveStaticAsset(request, text, { cacheControl: "public, max-age=300" })),
    },
    "/agents": {
      GET: (request) =>
        Promise.resolve(serveStaticAsset(request, page, {
          cacheControl: "public, max-age=300",
          headers: HTML_SECURITY_HEADERS,
        })),
    },
  };
}
