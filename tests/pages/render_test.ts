import assert from "node:assert/strict";
import type { Block, PageDocument } from "../../src/pages/page_document.ts";
import { renderBlocksHtml, renderPageHtml } from "../../src/pages/render_html.ts";
import { escapeMarkdown, renderPageMarkdown } from "../../src/pages/render_markdown.ts";

const HOSTILE = `<script>alert("x")</script> & 'quoted' "double"`;

function page(content: Block[]): PageDocument {
  return {
    version: 1,
    kind: "page",
    url: "https://example.com/p",
    title: `Title ${HOSTILE}`,
    description: "Desc",
    content,
    links: {
      html: "https://example.com/p",
      markdown: "https://example.com/p.md",
      json: "https://example.com/p.json",
      agentInstructions: "https://example.com/llms.txt",
    },
  };
}

const bare = (frame: { main: { toString(): string } }) => String(frame.main);

Deno.test("HTML renderer escapes <, & and quotes in text and URLs", () => {
  const out = renderPageHtml(
    page([
      { type: "heading", level: 2, text: HOSTILE, id: "h" },
      { type: "paragraph", content: [HOSTILE] },
      {
        type: "paragraph",
        content: [{
          type: "link",
          href: `https://example.com/?a=1&b="><script>`,
          children: [HOSTILE],
        }],
      },
      { type: "code", language: `sh"><x`, text: `</code></pre><script>1</script> && "q"` },
    ]),
    bare,
  );
  assert.ok(!out.includes("<script>"), out);
  assert.ok(
    out.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;"),
  );
  assert.ok(out.includes(`href="https://example.com/?a=1&amp;b=&quot;&gt;&lt;script&gt;"`), out);
  assert.ok(out.includes(`<code class="language-shx">&lt;/code&gt;&lt;/pre&gt;`), out);
});

Deno.test("HTML renderer never turns a javascript: or data: href into a link", async (t) => {
  for (
    const href of [
      "javascript:alert(1)",
      " JavaScript:alert(1)",
      "data:text/html,<b>",
      "vbscript:x",
    ]
  ) {
    await t.step(href, () => {
      const out = String(renderBlocksHtml([{
        type: "paragraph",
        content: [{ type: "link", href, children: ["click"] }],
      }]));
      assert.equal(out, "<p>click</p>\n");
    });
  }
});

Deno.test("HTML renderer gives every block its semantic element", () => {
  const out = String(renderBlocksHtml([
    { type: "heading", level: 2, text: "Two", id: "two" },
    { type: "heading", level: 3, text: "Three" },
    { type: "quote", content: [{ type: "strong", children: ["s"] }] },
    { type: "list", ordered: true, items: [["a"], ["b"]] },
    { type: "list", ordered: false, items: [["c"]] },
    {
      type: "example",
      title: "Illustrative example",
      content: [{ type: "code", language: "json", text: '{\n  "a": 1\n}' }],
    },
    { type: "paragraph", content: [{ type: "link", href: "https://e.com/x", children: ["e"] }] },
  ]));
  for (
    const fragment of [
      `<h2 id="two">Two</h2>`,
      `<h3 id="three">Three</h3>`,
      `<blockquote><p><strong>s</strong></p></blockquote>`,
      `<ol>\n<li>a</li>\n<li>b</li>\n</ol>`,
      `<ul>\n<li>c</li>\n</ul>`,
      `<figure class="example">\n<figcaption>Illustrative example</figcaption>`,
      `<pre><code class="language-json">{\n  &quot;a&quot;: 1\n}</code></pre>`,
      `<a href="https://e.com/x">e</a>`,
    ]
  ) assert.ok(out.includes(fragment), `${fragment} in ${out}`);
});

Deno.test("Markdown renderer escapes markup characters so text reads back as text", () => {
  assert.equal(escapeMarkdown("a*b_c`d[e]<f>&g\\h"), "a\\*b\\_c\\`d\\[e\\]\\<f\\>\\&g\\\\h");
  const out = renderPageMarkdown(page([
    { type: "paragraph", content: ["# not a heading"] },
    { type: "paragraph", content: ["1. not a list"] },
    { type: "list", ordered: false, items: [["- not nested"]] },
  ]));
  assert.ok(out.startsWith("# Title \\<script\\>alert"), out);
  assert.ok(out.includes("\n\n\\# not a heading\n\n"), out);
  assert.ok(out.includes("\n\n1\\. not a list\n\n"), out);
  assert.ok(out.includes("\n- \\- not nested\n"), out);
});

Deno.test("Markdown renderer never turns a javascript: href into a link", () => {
  const out = renderPageMarkdown(page([{
    type: "paragraph",
    content: [{ type: "link", href: "javascript:alert(1)", children: ["click"] }, " and ", {
      type: "link",
      href: "https://e.com/a b>c",
      children: ["ok"],
    }],
  }]));
  assert.ok(!out.includes("javascript:"), out);
  assert.ok(out.includes("click and [ok](<https://e.com/a%20b%3Ec>)"), out);
});

Deno.test("Markdown renderer fences code longer than any backtick run inside it", () => {
  const out = renderPageMarkdown(page([
    { type: "code", language: "md", text: "```\ninside\n````" },
    {
      type: "example",
      title: "Illustrative",
      content: [{ type: "paragraph", content: ["p"] }, {
        type: "code",
        language: "sh",
        text: "a\nb",
      }],
    },
  ]));
  assert.ok(out.includes("`````md\n```\ninside\n````\n`````"), out);
  assert.ok(out.includes("> **Illustrative**\n>\n> p\n>\n> ```sh\n> a\n> b\n> ```"), out);
});

Deno.test("a page of four or more sections gets a table of contents; ids come from the text", () => {
  const h = (level: 2 | 3, text: string, id?: string): Block =>
    id === undefined ? { type: "heading", level, text } : { type: "heading", level, text, id };
  const long = renderPageHtml(
    page([
      h(2, "MCP request rules"),
      h(3, "Événements & <tags>"),
      h(2, "Scopes", "scopes"),
      h(2, "Scopes"),
      h(2, "Errors"),
    ]),
    bare,
  );
  assert.ok(long.includes('<nav class="toc" aria-label="On this page">'), long);
  for (
    const [id, text] of [
      ["mcp-request-rules", "MCP request rules"],
      ["evenements-tags", "Événements &amp; &lt;tags&gt;"],
      ["scopes", "Scopes"],
      ["scopes-2", "Scopes"],
      ["errors", "Errors"],
    ]
  ) {
    assert.ok(long.includes(`<a href="#${id}">${text}</a>`), id);
    assert.match(long, new RegExp(`<h[23] id="${id}">`), id);
  }
  const short = renderPageHtml(page([h(2, "A"), h(2, "B"), h(2, "C"), h(3, "D")]), bare);
  assert.ok(!short.includes("toc"), "three sections read without one");
  assert.ok(short.includes('<h2 id="a">A</h2>'), "their headings still have anchors");
});
