/**
 * {base_url}: the public website. Unauthenticated reads, all prepared at start-up from the
 * templates in static/ (src/site/) and cloned per request; every one under the open CORS
 * policy, whose headers are part of the prepared answer.
 */
import type { Config } from "../config/config.ts";
import { corsPreflight, OPEN_CORS } from "../http/cors.ts";
import type { Handler } from "../http/handler.ts";
import { createRouter, type MethodHandlers, type RouterOptions } from "../http/router.ts";
import { DOCUMENT_SECURITY_HEADERS } from "../http/security_headers.ts";
import { type StaticAsset, staticAssetHandler } from "../http/static_asset.ts";
import { HEALTH } from "../content/health.ts";
import { loadPublicAssets } from "../content/public_assets.ts";
import { AI_CATALOG_PATH, aiCatalogHandler, discoveryRoute } from "../content/server_cards.ts";
import type { CatalogListing } from "../config/upstreams.ts";
import type { ScopeCatalogue } from "../oauth/scopes.ts";
import { assetHandler } from "../ui/stylesheet.ts";
import { createSiteLayout } from "../content/layout.ts";
import { withMcpNearMiss } from "../mcp/near_miss.ts";
import { htmlErrorAnswers } from "../ui/error_pages.ts";
import { html } from "../ui/html.ts";

export interface PublicSiteDeps {
  readonly config: Pick<Config, "baseUrl" | "authUrl" | "apiUrl">;
  readonly stylesheet: StaticAsset;
  /** Their upstreams' scopes join the OpenAPI document's `oauth2` scheme. */
  readonly scopes: ScopeCatalogue;
  /** The upstreams now served; those the operator lists join the AI Catalog. */
  readonly upstreams: () => readonly { readonly config: { readonly catalog?: CatalogListing } }[];
}

const DOCUMENT_CACHE = "public, max-age=300";
const HTML_HEADERS = Object.freeze({ ...OPEN_CORS.headers, ...DOCUMENT_SECURITY_HEADERS });

export async function createPublicSite(deps: PublicSiteDeps): Promise<Handler> {
  const site = await loadPublicAssets(deps.config, deps.scopes);
  // Prepared once and cloned per request (see staticAssetHandler for why).
  const health = new Response(new TextEncoder().encode(JSON.stringify(HEALTH)), {
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": "no-store",
      ...OPEN_CORS.headers,
    },
  });
  return createRouter({
    "/assets/style.css": { GET: assetHandler(deps.stylesheet) },
    "/health": _open({ GET: () => Promise.resolve(health.clone()) }),
    "/llms.txt": _document(site.llms),
    [AI_CATALOG_PATH]: discoveryRoute(await aiCatalogHandler(deps.config, deps.upstreams)),
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
  }, _errorAnswers(deps.config));
}

/** Unknown paths and wrong methods: a near-miss MCP path, a page for a browser, else text. */
function _errorAnswers(config: PublicSiteDeps["config"]): RouterOptions {
  const layout = createSiteLayout(config);
  const base = config.baseUrl;
  const errors = htmlErrorAnswers({
    frame: (title, main) =>
      layout({ title, description: title, main: html`<h1>${title}</h1>${main}`, alternates: [] }),
    next: [
      { href: `${base}/`, label: "The home page" },
      { href: `${base}/developers`, label: "The developer page" },
      { href: `${config.authUrl}/agents`, label: "Connect an agent" },
      { href: `${config.authUrl}/sign-in`, label: "Sign in" },
    ],
    headers: DOCUMENT_SECURITY_HEADERS,
  });
  return { ...errors, notFound: withMcpNearMiss(config, errors.notFound) };
}

function _document(
  asset: StaticAsset,
  headers: Readonly<Record<string, string>> = OPEN_CORS.headers,
): MethodHandlers {
  return _open({ GET: staticAssetHandler(asset, { cacheControl: DOCUMENT_CACHE, headers }) });
}

/** A route of answers prepared with the open policy's headers, and its preflight. */
function _open(handlers: MethodHandlers): MethodHandlers {
  return { ...handlers, OPTIONS: corsPreflight(OPEN_CORS, handlers) };
}
