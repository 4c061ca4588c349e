// deno-fmt-ignore-file -- the formatter re-indents html`` templates, and inside <pre> every
// space and line break is content.
/** PageDocument -> HTML. Every text is escaped by the `html` template; hrefs pass `safeHref`. */
import { type Html, html, safeHref } from "../ui/html.ts";
import type { Block, Inline, PageDocument } from "./page_document.ts";

/** What the site wraps around a rendered document: header, navigation, footer. */
export interface HtmlFrame {
  readonly title: string;
  readonly description: string;
  readonly main: Html;
  /** Other forms of the same page, announced with `<link rel="alternate">`. */
  readonly alternates: readonly { readonly href: string; readonly type: string }[];
}

export type HtmlLayout = (frame: HtmlFrame) => string;

export function renderPageHtml(document: PageDocument, layout: HtmlLayout): string {
  return layout({
    title: document.title,
    description: document.description,
    main: html`<h1>${document.title}</h1>
<p class="lead">${document.description}</p>
${renderBlocksHtml(document.content)}`,
    alternates: [
      { href: document.links.markdown, type: "text/markdown" },
      { href: document.links.json, type: "application/json" },
    ],
  });
}

export function renderBlocksHtml(blocks: readonly Block[]): Html {
  return html`${blocks.map(_block)}`;
}

export function renderInlinesHtml(inlines: readonly Inline[]): Html {
  return html`${inlines.map(_inline)}`;
}

function _block(block: Block): Html {
  switch (block.type) {
    case "heading":
      return block.level === 2
        ? html`<h2${_id(block.id)}>${block.text}</h2>\n`
        : html`<h3${_id(block.id)}>${block.text}</h3>\n`;
    case "paragraph":
      return html`<p>${renderInlinesHtml(block.content)}</p>\n`;
    case "quote":
      return html`<blockquote><p>${renderInlinesHtml(block.content)}</p></blockquote>\n`;
    case "list": {
      const items = block.items.map((item) => html`<li>${renderInlinesHtml(item)}</li>\n`);
      return block.ordered ? html`<ol>\n${items}</ol>\n` : html`<ul>\n${items}</ul>\n`;
    }
    case "example":
      // A figure, not a heading: examples must not break the document's heading order.
      return html`<figure class="example">\n<figcaption>${block.title}</figcaption>\n${
        renderBlocksHtml(block.content)
      }</figure>\n`;
    case "code":
      return html`<pre><code class="language-${_languageClass(block.language)}">${block.text}</code></pre>\n`;
  }
}

function _inline(inline: Inline): Html {
  if (typeof inline === "string") return html`${inline}`;
  const children = renderInlinesHtml(inline.children);
  if (inline.type === "strong") return html`<strong>${children}</strong>`;
  const href = safeHref(inline.href);
  // A scheme we do not link (javascript:, data:, …) keeps its text and loses the link.
  return href === null ? children : html`<a href="${href}">${children}</a>`;
}

function _id(id: string | undefined): Html {
  return id === undefined ? html`` : html` id="${id}"`;
}

function _languageClass(language: string): string {
  return language.replace(/[^A-Za-z0-9_-]/g, "") || "text";
}
