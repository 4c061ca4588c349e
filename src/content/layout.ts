/** The frame of every page on {base_url}: site navigation, main content, legal footer. */
import type { Config } from "../config/config.ts";
import type { HtmlLayout } from "../pages/render_html.ts";
import { html, page } from "../ui/html.ts";

export function createSiteLayout(config: Pick<Config, "baseUrl" | "authUrl">): HtmlLayout {
  const base = config.baseUrl;
  return (frame) =>
    page({
      title: `${frame.title} · Vestibule`,
      stylesheet: `${base}/assets/style.css`,
      head: html`<meta name="description" content="${frame.description}">
${frame.alternates.map((a) => html`<link rel="alternate" type="${a.type}" href="${a.href}">\n`)}`,
      body: html`
        <header>
          <nav aria-label="Site">
            <ul>
              <li><a href="${base}/">Vestibule</a></li>
              <li><a href="${base}/developers">Developers</a></li>
              <li><a href="${config.authUrl}/agents">Connect an agent</a></li>
              <li><a href="${base}/openapi.json">OpenAPI</a></li>
              <li><a href="${base}/llms.txt">llms.txt</a></li>
            </ul>
          </nav>
        </header>
        <main>
        ${frame.main}
        ${frame.alternates.length === 0
          ? ""
          : html`<p class="muted">Also as ${
            frame.alternates.map((a, i) =>
              html`${i === 0 ? "" : " and "}<a href="${a.href}">${_label(a.type)}</a>`
            )
          }.</p>`}
        </main>
        <footer>
          <nav aria-label="Legal">
            <ul>
              <li><a href="${base}/contact">Contact</a></li>
              <li><a href="${base}/privacy">Privacy</a></li>
              <li><a href="${base}/terms">Terms</a></li>
            </ul>
          </nav>
        </footer>
      `,
    });
}

function _label(type: string): string {
  return type === "text/markdown" ? "Markdown" : type === "application/json" ? "JSON" : type;
}
