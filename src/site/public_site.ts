import type { AppDeps, SharedAssets } from "../app.ts";
import { PUBLIC_CORS_HEADERS, publicPreflight } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import { createRouter, type MethodHandlers } from "../http/router.ts";
import { DOCUMENT_SECURITY_HEADERS } from "../http/security_headers.ts";
import { type StaticAsset, staticAssetHandler } from "../http/static_asset.ts";
import { stylesheetHandler } from "../ui/stylesheet.ts";
import { HEALTH } from "./health.ts";
import { loadPublicAssets, type PublicAssets } from "./public_assets.ts";

const DOCUMENT_CACHE = "public, max-age=300";
const PUBLIC_METHODS = "GET, HEAD, OPTIONS";
const HTML_HEADERS = Object.freeze({ ...PUBLIC_CORS_HEADERS, ...DOCUMENT_SECURITY_HEADERS });

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
      ...PUBLIC_CORS_HEADERS,
    },
  });
  return createRouter({
    "/assets/style.css": { GET: stylesheetHandler(assets.stylesheet) },
    "/health": {
      GET: () => Promise.resolve(health.clone()),
      OPTIONS: _preflight,
    },
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
  headers: Readonly<Record<string, string>> = PUBLIC_CORS_HEADERS,
): MethodHandlers {
  return {
    GET: staticAssetHandler(asset, { cacheControl: DOCUMENT_CACHE, headers }),
    OPTIONS: _preflight,
  };
}

function _preflight(): Promise<Response> {
  return Promise.resolve(publicPreflight(PUBLIC_METHODS));
}
