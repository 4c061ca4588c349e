// The developer page over HTTP: a table of contents with an anchor for every section, ids that
// follow the document, and the Markdown and JSON forms without it.
import assert from "node:assert/strict";
import { startTestServer } from "../support/harness.ts";

Deno.test("the developer page opens with a table of contents linking every section", async () => {
  const server = await startTestServer();
  try {
    const page = await (await fetch(`${server.baseUrl}/developers`)).text();
    const document = await (await fetch(`${server.baseUrl}/developers.json`)).json();
    const headings = document.content.filter((b: { type: string }) => b.type === "heading");
    const nav = page.match(/<nav class="toc" aria-label="On this page">([\s\S]*?)<\/nav>/);
    assert.ok(nav, "a table of contents");
    const links = [...nav[1]!.matchAll(/<a href="#([^"]+)">([^<]+)<\/a>/g)]
      .map(([, id, text]) => ({ id, text }));
    assert.deepEqual(
      links,
      headings.map((h: { id?: string; text: string }) => ({ id: h.id, text: h.text })),
      "every heading, in order, by the id the document gives it",
    );
    for (const { id } of links) {
      assert.equal(page.split(` id="${id}"`).length - 1, 1, `one element with id ${id}`);
      assert.match(page, new RegExp(`<h[23] id="${id}">`));
    }
    assert.ok(page.indexOf('<nav class="toc"') < page.indexOf(`id="${links[0]!.id}"`));
    const markdown = await (await fetch(`${server.baseUrl}/developers.md`)).text();
    assert.ok(!markdown.includes("On this page"), "the Markdown form is the document alone");
    assert.ok(!JSON.stringify(document).includes("On this page"));
  } finally {
    await server.close();
  }
});
