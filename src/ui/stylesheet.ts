import type { Handler } from "../http/handler.ts";
import { createStaticAsset, serveStaticAsset, type StaticAsset } from "../http/static_asset.ts";
import { runtime } from "../runtime/current.ts";

/** The one stylesheet, served at /assets/style.css on every origin that has pages. */
export async function loadStylesheet(): Promise<StaticAsset> {
  const css = await runtime.readTextFile(new URL("../../static/style.css", import.meta.url));
  return await createStaticAsset(css, "text/css; charset=utf-8");
}

/**
 * The copy buttons' script, served at /assets/copy.js on {auth_url}; a page that loads it says
 * so in its CSP (OWN_SCRIPTS_CSP) and works without it.
 */
export async function loadCopyScript(): Promise<StaticAsset> {
  const js = await runtime.readTextFile(new URL("../../static/scripts/copy.js", import.meta.url));
  return await createStaticAsset(js, "text/javascript; charset=utf-8");
}

/** Serves a page asset (the stylesheet, a script), cached briefly by browsers. */
export function assetHandler(asset: StaticAsset): Handler {
  return (request) =>
    Promise.resolve(serveStaticAsset(request, asset, { cacheControl: "public, max-age=300" }));
}
