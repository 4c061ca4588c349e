// What the onboarding part answers on {auth_url} (auth_site.ts maps the paths): the public MCP
// endpoint, and the connection guide as text and as a page, all from the one guide source.
import type { Tracing } from "../tracing/tracing.ts";
import type { EmailLinks } from "../accounts/email_links.ts";
import type { Config } from "../config/config.ts";
import type { Handler } from "../http/handler.ts";
import type { Limiters } from "../http/rate_limits.ts";
import type { LogSink } from "../http/request_log.ts";
import { HTML_SECURITY_HEADERS } from "../http/security_headers.ts";
import { createStaticAsset, staticAssetHandler } from "../http/static_asset.ts";
import { createMcpEndpoint } from "../mcp/endpoint.ts";
import type { McpMetrics } from "../mcp/transport.ts";
import { mcpServers } from "../mcp/servers.ts";
import type { OnboardingCaller } from "./caller.ts";
import { loadConnectionGuide, renderGuidePage, renderGuideText } from "./connection_guide.ts";
import { createOnboardingTools, type OnboardingToolDeps } from "./tools.ts";

/** Spec §8. */
export const ONBOARDING_MAX_BODY_BYTES = 16 * 1024;

export interface OnboardingRoutesDeps {
  readonly config: Pick<
    Config,
    "baseUrl" | "authUrl" | "apiUrl" | "mcpPageSize" | "mcpResponse" | "readTimeoutMs"
  >;
  readonly now: () => number;
  readonly log: LogSink;
  readonly emailLinks: EmailLinks;
  readonly mcpMetrics?: McpMetrics | undefined;
  readonly tracing?: Tracing | undefined;
  readonly limiters: Limiters;
  readonly scopes: OnboardingToolDeps["scopes"];
}

export interface OnboardingRoutes {
  /** POST /mcp, without credentials: the caller is its client address. */
  readonly mcp: Handler;
  /** GET /llms.txt */
  readonly guideText: Handler;
  /** GET /agents */
  readonly guidePage: Handler;
}

export async function createOnboardingRoutes(
  deps: OnboardingRoutesDeps,
): Promise<OnboardingRoutes> {
  const { config } = deps;
  const guide = await loadConnectionGuide(config);
  const mcp = createMcpEndpoint<OnboardingCaller>({
    tools: createOnboardingTools({
      config,
      emailLinks: deps.emailLinks,
      guide,
      fetch: globalThis.fetch,
      scopes: deps.scopes,
    }),
    config,
    maxBodyBytes: ONBOARDING_MAX_BODY_BYTES,
    // Anyone may ask: the caller is its client address, and so is its rate-limit bucket.
    access: {
      authenticate: (_request, { clientAddress }) =>
        Promise.resolve({ auth: { clientAddress }, rateKey: clientAddress }),
    },
    rateLimiter: deps.limiters.local("onboarding"),
    serverInfo: mcpServers(config).onboarding.info,
    // The same catalogue and guidance for everyone: shared caches may keep it.
    cacheScope: "public",
    instructions:
      `Public onboarding for Vestibule; it grants no business access. Call get_connection_guide for the exact steps to reach the OAuth-protected workspace MCP at ${guide.workspaceMcpUrl}, list_scopes for the scopes, describe_service for what is offered.`,
    log: deps.log,
    metrics: deps.mcpMetrics,
    tracing: deps.tracing,
  });
  const text = await createStaticAsset(renderGuideText(guide), "text/plain; charset=utf-8");
  const page = await createStaticAsset(renderGuidePage(guide), "text/html; charset=utf-8");
  return {
    mcp,
    guideText: staticAssetHandler(text, { cacheControl: "public, max-age=300" }),
    guidePage: staticAssetHandler(page, {
      cacheControl: "public, max-age=300",
      headers: HTML_SECURITY_HEADERS,
    }),
  };
}
