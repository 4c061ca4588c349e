import type { EmailLinks } from "./accounts/email_links.ts";
import type { Accounts, Sessions } from "./accounts/model.ts";
import type { Config } from "./config.ts";
import type { MailOutbox } from "./mail/mail_outbox.ts";
import type { Handler } from "./http/handler.ts";
import type { StaticAsset } from "./http/static_asset.ts";
import { createHostRouter } from "./http/host_router.ts";
import { type LogSink, withRequestLog } from "./http/request_log.ts";
import { createApiSite } from "./api_site.ts";
import { createAuthSite } from "./auth_site.ts";
import { createPublicSite } from "./site/public_site.ts";
import type { Store } from "./store/store.ts";
import { loadStylesheet } from "./ui/stylesheet.ts";
import { seedDemo } from "./workspace/demo.ts";

/** Everything the surfaces need, built once by main.ts (or a test) and handed down. */
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
}

/** What start-up loads once and every site may serve. */
export interface SharedAssets {
  readonly stylesheet: StaticAsset;
}

/** The whole service as one handler: three sites behind a Host router, with request logging. */
export async function createApp(deps: AppDeps): Promise<Handler> {
  const { config } = deps;
  if (config.demo) await seedDemo(deps);
  const assets: SharedAssets = { stylesheet: await loadStylesheet() };
  const sites = [
    { origin: config.baseUrl, handler: await createPublicSite(deps, assets) },
    { origin: config.authUrl, handler: await createAuthSite(deps, assets) },
    { origin: config.apiUrl, handler: await createApiSite(deps) },
  ];
  return withRequestLog(createHostRouter(sites), deps.log);
}
