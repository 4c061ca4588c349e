/**
 * Everything {base_url} serves, computed once at start-up from the templates in static/:
 * the page documents are validated, rendered three ways, and turned into precomputed
 * bodies with strong ETags and gzip variants.
 */
import type { Config } from "../config/config.ts";
import { createStaticAsset, type StaticAsset } from "../http/static_asset.ts";
import { isScope, type ScopeCatalogue } from "../oauth/scopes.ts";
import { type PageDocument } from "../pages/page_document.ts";
import { PageDocumentError, parsePageDocument } from "../pages/parse_page.ts";
import { type HtmlLayout, renderPageHtml } from "../pages/render_html.ts";
import { renderPageMarkdown } from "../pages/render_markdown.ts";
import { unsafeHtml } from "../ui/html.ts";
import { createSiteLayout } from "./layout.ts";
import { readTemplate, STATIC_DIR, TemplateError } from "./templates.ts";

export interface PageAssets {
  readonly document: PageDocument;
  readonly json: StaticAsset;
  readonly html: StaticAsset;
  readonly markdown: StaticAsset;
}

export interface PublicAssets {
  readonly index: PageAssets;
  readonly developers: PageAssets;
  readonly llms: StaticAsset;
  readonly openapi: StaticAsset;
  readonly contact: StaticAsset;
  readonly privacy: StaticAsset;
  readonly terms: StaticAsset;
}

export const HTML_TYPE = "text/html; charset=utf-8";

/** Loads and renders every template; throws TemplateError naming the first bad file. */
export async function loadPublicAssets(
  config: Pick<Config, "baseUrl" | "authUrl" | "apiUrl">,
  scopes: ScopeCatalogue,
  staticDir: URL = STATIC_DIR,
): Promise<PublicAssets> {
  const layout = createSiteLayout(config);
  const read = (name: string) => readTemplate(staticDir, name, config);
  const legal = (name: string) => _legalPage(name, read, layout);
  const openapiTemplate = await read("openapi.json");
  let openapi: OpenApiDocument;
  try {
    openapi = JSON.parse(openapiTemplate);
  } catch (error) {
    throw new TemplateError("static/openapi.json", `not valid JSON (${(error as Error).message})`);
  }
  return {
    index: await _pageAssets("pages/index.json", read, layout),
    developers: await _pageAssets("pages/developers.json", read, layout),
    llms: await createStaticAsset(await read("llms.txt"), "text/plain; charset=utf-8"),
    openapi: await createStaticAsset(
      _withUpstreamScopes(openapiTemplate, openapi, scopes),
      "application/json",
    ),
    contact: await legal("legal/contact.html"),
    privacy: await legal("legal/privacy.html"),
    terms: await legal("legal/terms.html"),
  };
}

/** The parts of static/openapi.json that name the scopes. */
interface OpenApiDocument {
  components: {
    securitySchemes: {
      oauth2: { flows: { authorizationCode: { scopes: Record<string, string> } } };
    };
  };
}

/**
 * The template (written by `deno task openapi`) names the spec's scopes; the upstreams' are the
 * operator's, so they join the `oauth2` scheme here, at start-up. Without upstreams the
 * template is served as it is.
 */
function _withUpstreamScopes(
  template: string,
  document: OpenApiDocument,
  catalogue: ScopeCatalogue,
): string {
  const upstream = catalogue.supported.filter((scope) => !isScope(scope));
  if (upstream.length === 0) return template;
  const scopes = document.components.securitySchemes.oauth2.flows.authorizationCode.scopes;
  for (const scope of upstream) scopes[scope] = catalogue.meaning(scope);
  return JSON.stringify(document, null, 2) + "\n";
}

async function _pageAssets(
  name: string,
  read: (name: string) => Promise<string>,
  layout: HtmlLayout,
): Promise<PageAssets> {
  let document: PageDocument;
  try {
    document = parsePageDocument(await read(name));
  } catch (error) {
    if (error instanceof PageDocumentError) {
      throw new TemplateError(`static/${name}`, error.message);
    }
    throw error;
  }
  return {
    document,
    json: await createStaticAsset(JSON.stringify(document, null, 2) + "\n", "application/json"),
    html: await createStaticAsset(renderPageHtml(document, layout), HTML_TYPE),
    markdown: await createStaticAsset(renderPageMarkdown(document), "text/markdown; charset=utf-8"),
  };
}

/** A legal page is an operator-written HTML fragment whose first `<h1>` is the title. */
async function _legalPage(
  name: string,
  read: (name: string) => Promise<string>,
  layout: HtmlLayout,
): Promise<StaticAsset> {
  // The operator's comments (instructions at the top of each file) stay out of the page.
  const fragment = (await read(name)).replace(/<!--[\s\S]*?-->\s*/g, "");
  const heading = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(fragment);
  if (!heading) throw new TemplateError(`static/${name}`, "needs an <h1> with the page title");
  const title = heading[1]!.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim();
  const page = layout({
    title: _decodeEntities(title),
    description: _decodeEntities(title),
    main: unsafeHtml(fragment),
    alternates: [],
  });
  return await createStaticAsset(page, HTML_TYPE);
}

/** The title is re-escaped by the layout, so entities the operator wrote are decoded first. */
function _decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name]!,
  );
}
