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

/** From this many sections (level-2 headings) on, a page opens with its table of contents. */
const TOC_MIN_SECTIONS = 4;

export function renderPageHtml(document: PageDocument, layout: HtmlLayout): string {
  const ids = _headingIds(document.content);
  return layout({
    title: document.title,
    description: document.description,
    main: html`<h1>${document.title}</h1>
<p class="lead">${document.description}</p>
${_contents(document.content, ids)}${renderBlocksHtml(document.content, ids)}`,
    alternates: [
      { href: document.links.markdown, type: "text/markdown" },
      { href: document.links.json, type: "application/json" },
    ],
  });
}

/** `ids`: each heading's anchor; by default the headings' own, or made from their text. */
export function renderBlocksHtml(
  blocks: readonly Block[],
  ids: _HeadingIds = _headingIds(blocks),
): Html {
  return html`${blocks.map((block) => _block(block, ids))}`;
}

type _HeadingIds = ReadonlyMap<Block, string>;
type _Heading = Extract<Block, { type: "heading" }>;

/**
 * An anchor for every heading of the page: its `id` when the document gives one, else a slug
 * of its text (`MCP request rules` -> `mcp-request-rules`), so links to a section stay valid
 * while its title does; a repeated one gets `-2`, `-3`, ….
 */
function _headingIds(blocks: readonly Block[]): _HeadingIds {
  const headings = blocks.filter((b): b is _Heading => b.type === "heading");
  const taken = new Set(headings.flatMap((h) => h.id === undefined ? [] : [h.id]));
  const ids = new Map<Block, string>();
  for (const heading of headings) {
    if (heading.id !== undefined) {
      ids.set(heading, heading.id);
      continue;
    }
    const slug = heading.text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "section";
    let id = slug;
    for (let n = 2; taken.has(id); n++) id = `${slug}-${n}`;
    taken.add(id);
    ids.set(heading, id);
  }
  return ids;
}

/** The table of contents of a long page: its sections, each with its subsections. */
function _contents(blocks: readonly Block[], ids: _HeadingIds): Html {
  const sections: { heading: _Heading; subsections: _Heading[] }[] = [];
  for (const block of blocks) {
    if (block.type !== "heading") continue;
    if (block.level === 2) sections.push({ heading: block, subsections: [] });
    else sections.at(-1)?.subsections.push(block);
  }
  if (sections.length < TOC_MIN_SECTIONS) return html``;
  const link = (heading: _Heading) =>
    html`<a href="#${ids.get(heading)}">${heading.text}</a>`;
  return html`<nav class="toc" aria-label="On this page">
<ul>
${sections.map(({ heading, subsections }) => html`<li>${link(heading)}${
    subsections.length === 0 ? "" : html`
<ul>
${subsections.map((sub) => html`<li>${link(sub)}</li>\n`)}</ul>
`}</li>\n`)}</ul>
</nav>
`;
}

export function renderInlinesHtml(inlines: readonly Inline[]): Html {
  return html`${inlines.map(_inline)}`;
}

function _block(block: Block, ids: _HeadingIds): Html {
  switch (block.type) {
    case "heading":
      return block.level === 2
        ? html`<h2${_id(ids.get(block) ?? block.id)}>${block.text}</h2>\n`
        : html`<h3${_id(ids.get(block) ?? block.id)}>${block.text}</h3>\n`;
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
        renderBlocksHtml(block.content, ids)
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
