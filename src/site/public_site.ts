import type { AppDeps, SharedAssets } from "../app.ts";
import { stylesheetHandler } from "../ui/stylesheet.ts";
import type { Handler } from "../http/handler.ts";
import { jsonResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { PUBLIC_CORS_HEADERS } from "../http/cors.ts";

/** The public website at {base_url}. */
export function createPublicSite(_deps: AppDeps, assets: SharedAssets): Promise<Handler> {
  return Promise.resolve(createRouter({
    "/assets/style.css": { GET: stylesheetHandler(assets.stylesheet) },
    "/health": {
      GET: () =>
        Promise.resolve(jsonResponse({ ok: true, service: "www" }, {
          headers: { "Cache-Control": "no-store", ...PUBLIC_CORS_HEADERS },
        })),
    },
  }));
}
