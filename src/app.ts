/**
 * The composition root: what main.ts (or a test) built goes in, the whole service comes out
 * as one handler. The three sites share what is built here once (the stylesheet, the CORS
 * policies, the signing keys, the workspace services) and sit behind a Host router with the
 * request log.
 */
import type { EmailLinks } from "./accounts/email_links.ts";
import type { Accounts, Sessions } from "./accounts/model.ts";
import type { EventOutbox } from "./events/event_outbox.ts";
import type { MailOutbox } from "./mail/mail_outbox.ts";
import { createApiSite } from "./api_site.ts";
import { createAuthSite } from "./auth_site.ts";
import type { Config } from "./config/config.ts";
import { createCorsPolicies } from "./http/cors.ts";
import type { Handler } from "./http/handler.ts";
import type { Limiters } from "./http/rate_limits.ts";
import { createHostRouter } from "./http/host_router.ts";
import { type LogSink, withRequestLog } from "./http/request_log.ts";
import { createSigningKeys } from "./oauth/signing_keys.ts";
import type { ServiceMetrics } from "./ops/service_metrics.ts";
import { createPublicSite } from "./public_site.ts";
import type { Store } from "./store/store.ts";
import { loadStylesheet } from "./ui/stylesheet.ts";
import { seedDemo } from "./workspace/demo.ts";
import { createWorkspaceServices } from "./workspace/services.ts";

/** Everything main.ts (or a test) builds before the sites. */
export interface AppDeps {
  readonly config: Config;
  readonly log: LogSink;
  /** Milliseconds since the epoch; injected so tests never sleep. */
  readonly now: () => number;
  readonly store: Store;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly mailer: MailOutbox;
  readonly emailLinks: EmailLinks;
  readonly limiters: Limiters;
  /** Events to VESTIBULE_WEBHOOK_URL (src/accounts/services.ts builds them). */
  readonly events: EventOutbox;
  /** Counts every request when the operator listener is on (VESTIBULE_ADMIN_LISTEN). */
  readonly metrics?: ServiceMetrics | undefined;
}

export async function createApp(deps: AppDeps): Promise<Handler> {
  const { config, store, now, accounts, metrics } = deps;
  if (config.demo) await seedDemo(deps);
  const shared = {
    stylesheet: await loadStylesheet(),
    cors: createCorsPolicies(config.trustedOrigins),
    keys: createSigningKeys({ store, now }),
    workspace: createWorkspaceServices({
      store,
      now,
      accounts,
      mailer: deps.mailer,
      events: deps.events,
      authUrl: config.authUrl,
    }),
  };
  const sites = [
    { origin: config.baseUrl, handler: await createPublicSite({ config, ...shared }) },
    {
      origin: config.authUrl,
      handler: await createAuthSite({
        ...deps,
        ...shared,
        oauthMetrics: metrics?.oauth,
        mcpMetrics: metrics?.mcp("onboarding"),
      }),
    },
    {
      origin: config.apiUrl,
      handler: await createApiSite({ ...deps, ...shared, mcpMetrics: metrics?.mcp("workspace") }),
    },
  ];
  return withRequestLog(createHostRouter(sites), deps.log, metrics?.observeRequest);
}
