import type { AppDeps, SharedAssets } from "../app.ts";
import { corsPreflight, OPEN_CORS } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import { createRouter, type MethodHandlers } from "../http/router.ts";
import { DOCUMENT_SECURITY_HEADERS } from "../http/security_headers.ts";
import { type StaticAsset, staticAssetHandler } from "../http/static_asset.ts";
import { stylesheetHandler } from "../ui/stylesheet.ts";
import { HEALTH } from "./health.ts";
import { loadPublicAssets, type PublicAssets } from "./public_assets.ts";

const DOCUMENT_CACHE = "public, max-age=300";
// Every answer is prepared once, so the open CORS policy's headers are part of it.
const HTML_HEADERS = Object.freeze({ ...OPEN_CORS.headers, ...DOCUMENT_SECURITY_HEADERS });

/** The public website at {base_url}: unauthenticated reads, all precomputed at start-up. */
export async function createPublicSite(
  deps: AppDeps,
  assets: SharedAssets,
  publicAssets?: PublicAssets,
): Promise<Handler> {
  const site = publicAssets ?? await loadPublicAssets(deps.config);
  // Prepared once and cloned per request (see staticAssetHandler for why).
  const health = new Response(new TextEncoder().encode(JSON.stringify(HEALTH)), {
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      ...OPEN_CORS.headers,
    },
  });
  return createRouter({
    "/assets/style.css": { GET: stylesheetHandler(assets.stylesheet) },
    "/health": _open({ GET: () => Promise.resolve(health.clone()) }),
    "/llms.txt": _document(site.llms),
    "/": _document(site.index.html, HTML_HEADERS),
    "/index.json": _document(site.index.json),
    "/index.md": _document(site.index.markdown),
    "/developers": _document(site.developers.html, HTML_HEADERS),
    "/developers.json": _document(site.developers.json),
    "/developers.md": _document(site.developers.markdown),
    "/openapi.json": _document(site.openapi),
    "/contact": _document(site.contact, HTML_HEADERS),
    "/privacy": _document(site.privacy, HTML_HEADERS),
    "/terms": _document(site.terms, HTML_HEADERS),
  });
}

function _document(
  asset: StaticAsset,
  headers: Readonly<Record<string, string>> = OPEN_CORS.headers,
): MethodHandlers {
  return _open({ GET: staticAssetHandler(asset, { cacheControl: DOCUMENT_CACHE, headers }) });
}

/** A route of answers built with the open policy's headers, and its preflight. */
function _open(handlers: MethodHandlers): MethodHandlers {
  return { ...handlers, OPTIONS: corsPreflight(OPEN_CORS, handlers) };
}
