import assert from "node:assert/strict";
import { loadPublicAssets } from "../../src/content/public_assets.ts";
import { STATIC_DIR, TemplateError } from "../../src/content/templates.ts";
import { config } from "../oauth/fixtures.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

/** A copy of static/ in a temporary directory, with some files replaced. */
async function staticCopy(replace: Record<string, string>): Promise<URL> {
  const dir = await Deno.makeTempDir({ prefix: "vestibule-static-" });
  const copy = async (from: URL, to: string) => {
    for await (const entry of Deno.readDir(from)) {
      if (entry.isDirectory) {
        await Deno.mkdir(`${to}/${entry.name}`);
        await copy(new URL(`${entry.name}/`, from), `${to}/${entry.name}`);
      } else await Deno.copyFile(new URL(entry.name, from), `${to}/${entry.name}`);
    }
  };
  await copy(STATIC_DIR, dir);
  for (const [name, text] of Object.entries(replace)) {
    await Deno.writeTextFile(`${dir}/${name}`, text);
  }
  return new URL(`file://${dir}/`);
}

Deno.test("templates are filled with the configured origins", async () => {
  const assets = await loadPublicAssets(config, SPEC_SCOPES);
  const text = new TextDecoder().decode(assets.llms.body);
  assert.ok(text.includes("https://auth.example.com/llms.txt"));
  assert.ok(!/\{(base|auth|api)_url\}/.test(text));
  assert.equal(assets.index.document.url, "https://www.example.com/");
  const openapi = JSON.parse(new TextDecoder().decode(assets.openapi.body));
  assert.equal(openapi.servers[0].url, "https://www.example.com");
});

Deno.test("a bad template stops loading with the file name and the JSON path", async (t) => {
  const cases = [
    {
      name: "page document with a bad heading level",
      files: {
        "pages/developers.json": JSON.stringify({
          version: 1,
          kind: "page",
          url: "{base_url}/developers",
          title: "t",
          description: "d",
          content: [{ type: "paragraph", content: ["x"] }, {
            type: "heading",
            level: 1,
            text: "x",
          }],
          links: {
            html: "{base_url}/developers",
            markdown: "{base_url}/developers.md",
            json: "{base_url}/developers.json",
            agentInstructions: "{base_url}/llms.txt",
          },
        }),
      },
      message: "static/pages/developers.json: $.content[1].level: must be 2 or 3",
    },
    {
      name: "page document that is not JSON",
      files: { "pages/index.json": "{ nope" },
      message: /^static\/pages\/index\.json: \$: not valid JSON/,
    },
    {
      name: "legal page without a title",
      files: { "legal/terms.html": "<p>no heading</p>" },
      message: "static/legal/terms.html: needs an <h1> with the page title",
    },
    {
      name: "broken openapi.json",
      files: { "openapi.json": "[" },
      message: /^static\/openapi\.json: not valid JSON/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const dir = await staticCopy(c.files);
      try {
        await assert.rejects(loadPublicAssets(config, SPEC_SCOPES, dir), (error: unknown) => {
          assert.ok(error instanceof TemplateError);
          if (typeof c.message === "string") assert.equal(error.message, c.message);
          else assert.match(error.message, c.message);
          return true;
        });
      } finally {
        await Deno.remove(dir.pathname, { recursive: true });
      }
    });
  }
});

Deno.test("a missing template names the file", async () => {
  const dir = await staticCopy({});
  try {
    await Deno.remove(new URL("llms.txt", dir));
    await assert.rejects(
      loadPublicAssets(config, SPEC_SCOPES, dir),
      /^TemplateError: static\/llms\.txt: cannot read/,
    );
  } finally {
    await Deno.remove(dir.pathname, { recursive: true });
  }
});

Deno.test("bodies over 1 KiB get a gzip variant with its own strong ETag", async () => {
  const assets = await loadPublicAssets(config, SPEC_SCOPES);
  const html = assets.developers.html;
  assert.ok(html.body.byteLength > 1024);
  assert.ok(html.gzip && html.gzip.body.byteLength < html.body.byteLength);
  assert.match(html.etag, /^"[^"]+"$/);
  assert.notEqual(html.gzip.etag, html.etag);
  const unzipped = await new Response(
    new Blob([html.gzip.body]).stream().pipeThrough(new DecompressionStream("gzip")),
  ).arrayBuffer();
  assert.deepEqual(new Uint8Array(unzipped), html.body);
});
