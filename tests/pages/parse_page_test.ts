import assert from "node:assert/strict";
import * as v from "valibot";
import { PageDocumentSchema } from "../../src/pages/page_document.ts";
import { PageDocumentError, parsePageDocument } from "../../src/pages/parse_page.ts";

const LINKS = {
  html: "https://example.com/p",
  markdown: "https://example.com/p.md",
  json: "https://example.com/p.json",
  agentInstructions: "https://example.com/llms.txt",
};

function documentWith(content: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    version: 1,
    kind: "page",
    url: LINKS.html,
    title: "T",
    description: "D",
    content,
    links: LINKS,
    ...extra,
  });
}

Deno.test("parsePageDocument accepts every block and inline type", () => {
  const document = parsePageDocument(documentWith([
    { type: "heading", level: 2, text: "A", id: "a" },
    { type: "heading", level: 3, text: "B" },
    {
      type: "paragraph",
      content: ["x", {
        type: "link",
        href: "https://e.com",
        children: [{ type: "strong", children: ["y"] }],
      }],
    },
    { type: "quote", content: ["q"] },
    { type: "list", ordered: true, items: [["one"], ["two"]] },
    {
      type: "example",
      title: "Illustrative",
      content: [{ type: "code", language: "sh", text: "echo" }, {
        type: "example",
        title: "nested",
        content: [{ type: "heading", level: 3, text: "C", id: "c" }],
      }],
    },
  ]));
  assert.equal(document.content.length, 6);
});

Deno.test("parsePageDocument names the JSON path of the first problem", async (t) => {
  const cases: { name: string; text: string; path: string; reason: RegExp }[] = [
    { name: "not JSON", text: "{", path: "$", reason: /not valid JSON/ },
    {
      name: "heading level 4",
      text: documentWith([{ type: "heading", level: 4, text: "x" }]),
      path: "$.content[0].level",
      reason: /must be 2 or 3/,
    },
    {
      name: "unknown block type",
      text: documentWith([{ type: "table" }]),
      path: "$.content[0].type",
      reason: /./,
    },
    {
      name: "unknown inline type deep in a list",
      text: documentWith([{
        type: "list",
        ordered: false,
        items: [["ok", { type: "em", children: [] }]],
      }]),
      path: "$.content[0].items[0][1]",
      reason: /string or an object of type link or strong/,
    },
    {
      name: "relative link",
      text: documentWith([{
        type: "paragraph",
        content: [{ type: "link", href: "/x", children: [] }],
      }]),
      path: "$.content[0].content[0].href",
      reason: /absolute URI/,
    },
    {
      name: "typo in a key",
      text: documentWith([{ type: "code", language: "sh", txt: "echo" }]),
      path: "$.content[0].text",
      reason: /./,
    },
    {
      name: "missing links member",
      text: documentWith([], { links: { ...LINKS, agentInstructions: undefined } }),
      path: "$.links.agentInstructions",
      reason: /./,
    },
    {
      name: "version 2",
      text: documentWith([], { version: 2 }),
      path: "$.version",
      reason: /./,
    },
    {
      name: "url differs from links.html",
      text: documentWith([], { url: "https://example.com/other" }),
      path: "$.url",
      reason: /links\.html/,
    },
    {
      name: "duplicate heading id inside an example",
      text: documentWith([
        { type: "heading", level: 2, text: "A", id: "a" },
        {
          type: "example",
          title: "E",
          content: [{ type: "heading", level: 3, text: "B", id: "a" }],
        },
      ]),
      path: "$.content[1].content[0].id",
      reason: /duplicate heading id "a"/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      assert.throws(() => parsePageDocument(c.text), (error: unknown) => {
        assert.ok(error instanceof PageDocumentError);
        assert.equal(error.path, c.path);
        assert.match(error.reason, c.reason);
        return true;
      });
    });
  }
});

Deno.test("the committed page templates are valid PageDocuments", async () => {
  for (const name of ["index", "developers"]) {
    const text = await Deno.readTextFile(
      new URL(`../../static/pages/${name}.json`, import.meta.url),
    );
    const filled = text.replaceAll(/\{(base|auth|api)_url\}/g, "https://example.com");
    assert.ok(v.safeParse(PageDocumentSchema, JSON.parse(filled)).success, name);
  }
});
