// Properties of the page-document parser and renderers (src/pages/): any text either parses
// or fails with a PageDocumentError; whatever parses renders; HTML escapes every string.
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import type { Block, Inline, PageDocument } from "../../src/pages/page_document.ts";
import { PageDocumentError, parsePageDocument } from "../../src/pages/parse_page.ts";
import { renderPageHtml } from "../../src/pages/render_html.ts";
import { renderPageMarkdown } from "../../src/pages/render_markdown.ts";
import { createSiteLayout } from "../../src/content/layout.ts";
import { escapeHtml } from "../../src/ui/html.ts";
import { config } from "../oauth/fixtures.ts";
import { fuzzRuns, hostileText } from "./fuzz_support.ts";

const layout = createSiteLayout(config);

const href = fc.oneof(
  { weight: 3, arbitrary: fc.webUrl({ withQueryParameters: true, withFragments: true }) },
  fc.constantFrom(
    "javascript:alert(1)",
    " JavaScript:alert(1)",
    "data:text/html,<b>x</b>",
    'https://e.com/?a=<b>&c="d"',
    "https://e.com/a b>c",
    "mailto:a@example.com",
    "vbscript:x",
    "#frag",
    "/relative",
    "not a url",
  ),
  hostileText.map((s) => `https://example.com/${s}`),
);

const { block } = fc.letrec<{ inline: Inline; block: Block }>((tie) => ({
  inline: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: hostileText },
    fc.record({
      type: fc.constant("link" as const),
      href,
      children: fc.array(tie("inline"), { maxLength: 3 }),
    }),
    fc.record({
      type: fc.constant("strong" as const),
      children: fc.array(tie("inline"), { maxLength: 3 }),
    }),
  ),
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      type: fc.constant("heading" as const),
      level: fc.constantFrom(2 as const, 3 as const),
      text: hostileText,
      id: fc.constantFrom("a", "b-2", "overview"),
    }, { requiredKeys: ["type", "level", "text"] }),
    fc.record({
      type: fc.constant("paragraph" as const),
      content: fc.array(tie("inline"), { maxLength: 4 }),
    }),
    fc.record({
      type: fc.constant("quote" as const),
      content: fc.array(tie("inline"), { maxLength: 4 }),
    }),
    fc.record({
      type: fc.constant("list" as const),
      ordered: fc.boolean(),
      items: fc.array(fc.array(tie("inline"), { maxLength: 3 }), { maxLength: 3 }),
    }),
    fc.record({
      type: fc.constant("example" as const),
      title: hostileText,
      content: fc.array(tie("block"), { maxLength: 3 }),
    }),
    fc.record({ type: fc.constant("code" as const), language: hostileText, text: hostileText }),
  ),
})) as { inline: fc.Arbitrary<Inline>; block: fc.Arbitrary<Block> };

const documentValue: fc.Arbitrary<PageDocument> = fc.record({
  title: hostileText,
  description: hostileText,
  content: fc.array(block, { maxLength: 6 }),
  page: fc.webUrl(),
}).map(({ page, ...rest }) => ({
  version: 1 as const,
  kind: "page" as const,
  url: page,
  ...rest,
  links: {
    html: page,
    markdown: `${page}.md`,
    json: `${page}.json`,
    agentInstructions: "https://www.example.com/llms.txt",
  },
}));

/** A document with one value somewhere replaced by anything. */
const brokenDocument: fc.Arbitrary<unknown> = fc.tuple(
  documentValue,
  fc.jsonValue({ maxDepth: 2 }),
  fc.nat(),
).map(([document, replacement, pick]) => {
  const copy = JSON.parse(JSON.stringify(document));
  const holders: [Record<string, unknown>, string][] = [];
  const walk = (node: unknown) => {
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      holders.push([node as Record<string, unknown>, key]);
      walk(value);
    }
  };
  walk(copy);
  const [holder, key] = holders[pick % holders.length]!;
  holder[key] = replacement;
  return copy;
});

const pageText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: documentValue.map((d) => JSON.stringify(d)) },
  { weight: 3, arbitrary: brokenDocument.map((d) => JSON.stringify(d)) },
  fc.json({ maxDepth: 3 }),
  documentValue.chain((d) => {
    const text = JSON.stringify(d);
    return fc.nat(text.length).map((cut) => text.slice(0, cut));
  }),
  hostileText,
);

/** Elements the layout and the renderer write; anything else in the output came from input. */
const OUR_ELEMENTS = new Set(
  ("html head meta title link body header nav ul ol li a main p footer h1 h2 h3 blockquote " +
    "figure figcaption pre code strong").split(" "),
);
const TAG = /<(?:!doctype html|\/?([a-z][a-z0-9]*)((?: [a-z-]+="[^"<>]*")*))>/g;

/** Fails when the HTML holds a `<` or `>` that does not belong to one of our own tags. */
function _assertOnlyOurMarkup(out: string): void {
  for (const match of out.matchAll(TAG)) {
    if (match[1] !== undefined) {
      assert.ok(OUR_ELEMENTS.has(match[1]), `unexpected element <${match[1]}>`);
    }
  }
  const rest = out.replace(TAG, "");
  const stray = rest.search(/[<>]/);
  assert.equal(
    stray,
    -1,
    `unescaped markup: ${JSON.stringify(rest.slice(stray - 40, stray + 40))}`,
  );
}

/** Every plain string of the document, as the reader sees it. */
function* _texts(document: PageDocument): Generator<string> {
  yield document.title;
  yield document.description;
  const inlines = function* (items: readonly Inline[]): Generator<string> {
    for (const item of items) {
      if (typeof item === "string") yield item;
      else yield* inlines(item.children);
    }
  };
  const blocks = function* (items: readonly Block[]): Generator<string> {
    for (const item of items) {
      if (item.type === "heading" || item.type === "code") yield item.text;
      else if (item.type === "paragraph" || item.type === "quote") yield* inlines(item.content);
      else if (item.type === "list") { for (const entry of item.items) yield* inlines(entry); }
      else {
        yield item.title;
        yield* blocks(item.content);
      }
    }
  };
  yield* blocks(document.content);
}

Deno.test("fuzz pages: any text parses or fails with a PageDocumentError naming a path", () => {
  fc.assert(
    fc.property(pageText, (text) => {
      try {
        parsePageDocument(text);
      } catch (error) {
        assert.ok(error instanceof PageDocumentError, `threw ${error}`);
        assert.match(error.path, /^\$/);
        assert.ok(error.reason.length > 0);
      }
    }),
    fuzzRuns(2000),
  );
});

Deno.test("fuzz pages: whatever parses renders, and the HTML escapes every string", () => {
  let parsed = 0;
  fc.assert(
    fc.property(documentValue, (value) => {
      let document: PageDocument;
      try {
        document = parsePageDocument(JSON.stringify(value));
      } catch (error) {
        if (error instanceof PageDocumentError) return; // a duplicate id, an invalid URI
        throw error;
      }
      parsed++;
      const out = renderPageHtml(document, layout);
      _assertOnlyOurMarkup(out);
      for (const text of _texts(document)) {
        assert.ok(out.includes(escapeHtml(text)), `${JSON.stringify(text)} is not shown escaped`);
      }
      assert.equal(typeof renderPageMarkdown(document), "string");
    }),
    fuzzRuns(1500),
  );
  // The property says nothing if nothing parses.
  assert.ok(parsed > 500, `only ${parsed} generated documents parsed`);
});
