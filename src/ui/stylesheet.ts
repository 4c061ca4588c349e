import type { Handler } from "../http/handler.ts";
import { createStaticAsset, serveStaticAsset, type StaticAsset } from "../http/static_asset.ts";

/** The one stylesheet, served at /assets/style.css on every origin that has pages. */
export async function loadStylesheet(): Promise<StaticAsset> {
  const css = await Deno.readTextFile(new URL("../../static/style.css", import.meta.url));
  return await createStaticAsset(css, "text/css; charset=utf-8");
}

export function stylesheetHandler(asset: StaticAsset): Handler {
  return (request) =>
    Promise.resolve(serveStaticAsset(request, asset, { cacheControl: "public, max-age=300" }));
}
