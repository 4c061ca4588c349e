// The public website over real sockets: every route of issue 2 and its HTTP behaviour.
import assert from "node:assert/strict";
import * as v from "valibot";
import { SCOPE_MEANINGS } from "../../../src/oauth/scopes.ts";
import {
  type Block,
  type Inline,
  type PageDocument,
  PageDocumentSchema,
} from "../../../src/pages/page_document.ts";
import { escapeMarkdown } from "../../../src/pages/render_markdown.ts";
import { fillPlaceholders } from "../../../src/content/templates.ts";
import { escapeHtml } from "../../../src/ui/html.ts";
import { startTestServer } from "../support/harness.ts";

/** Sends a raw HTTP/1.1 request, since fetch always derives Host from the URL. */
async function rawRequest(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    return new TextDecoder().decode(await new Blob(chunks).arrayBuffer());
  } finally {
    conn.close();
  }
}

function* blocks(content: readonly Block[]): Generator<Block> {
  for (const block of content) {
    yield block;
    if (block.type === "example") yield* blocks(block.content);
  }
}

function* inlines(content: readonly Block[]): Generator<Inline> {
  const walk = function* (items: readonly Inline[]): Generator<Inline> {
    for (const item of items) {
      yield item;
      if (typeof item !== "string") yield* walk(item.children);
    }
  };
  for (const block of blocks(content)) {
    if (block.type === "paragraph" || block.type === "quote") yield* walk(block.content);
    if (block.type === "list") { for (const item of block.items) yield* walk(item); }
  }
}

function text(items: readonly Inline[]): string {
  return items.map((i) => typeof i === "string" ? i : text(i.children)).join("");
}

Deno.test("public website on {base_url}", async (t) => {
  const server = await startTestServer();
  const base = server.baseUrl;
  const get = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);
  const documents: Record<string, PageDocument> = {};
  try {
    await t.step("health is exactly ok:true service:www, no-store, CORS", async () => {
      const response = await get("/health");
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("Content-Type"), "application/json");
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
      assert.equal(await response.text(), '{"ok":true,"service":"www"}');
    });

    await t.step(
      "every document answers with its type, caching and CORS, and 304 to its ETag",
      async () => {
        const routes: [string, string][] = [
          ["/llms.txt", "text/plain; charset=utf-8"],
          ["/", "text/html; charset=utf-8"],
          ["/index.json", "application/json"],
          ["/index.md", "text/markdown; charset=utf-8"],
          ["/developers", "text/html; charset=utf-8"],
          ["/developers.json", "application/json"],
          ["/developers.md", "text/markdown; charset=utf-8"],
          ["/openapi.json", "application/json"],
          ["/contact", "text/html; charset=utf-8"],
          ["/privacy", "text/html; charset=utf-8"],
          ["/terms", "text/html; charset=utf-8"],
          ["/assets/style.css", "text/css; charset=utf-8"],
        ];
        for (const [path, type] of routes) {
          const response = await get(path);
          const body = await response.arrayBuffer();
          assert.equal(response.status, 200, path);
          assert.equal(response.headers.get("Content-Type"), type, path);
          assert.equal(response.headers.get("Cache-Control"), "public, max-age=300", path);
          if (path !== "/assets/style.css") {
            assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*", path);
          }
          assert.match(response.headers.get("ETag") ?? "", /^"[A-Za-z0-9_-]+(-gz)?"$/, path);
          assert.ok(body.byteLength > 100, path);
          assert.ok(!new TextDecoder().decode(body).includes("{base_url}"), `${path} is filled`);
          // Revalidation is an answer of the route too: its ETag, caching and CORS, no body.
          const etag = response.headers.get("ETag")!;
          const again = await get(path, { headers: { "If-None-Match": etag } });
          assert.equal(again.status, 304, path);
          assert.equal(again.headers.get("ETag"), etag, path);
          assert.equal(again.headers.get("Cache-Control"), "public, max-age=300", path);
          if (path !== "/assets/style.css") {
            assert.equal(again.headers.get("Access-Control-Allow-Origin"), "*", path);
          }
          assert.equal(await again.text(), "", path);
        }
      },
    );

    await t.step("both page documents are PageDocument version 1 with absolute links", async () => {
      for (const [name, html] of [["index", "/"], ["developers", "/developers"]] as const) {
        const json = await (await get(`/${name}.json`)).json();
        const result = v.safeParse(PageDocumentSchema, json);
        assert.ok(result.success, `${name}: ${JSON.stringify(result.issues?.[0]?.path)}`);
        const document = result.output;
        assert.equal(document.url, `${base}${html}`);
        assert.deepEqual(document.links, {
          html: `${base}${html}`,
          markdown: `${base}/${name}.md`,
          json: `${base}/${name}.json`,
          agentInstructions: `${base}/llms.txt`,
        });
        documents[name] = document;
      }
    });

    await t.step("between them the documents use every block and inline type", () => {
      const all = [...blocks(documents.index!.content), ...blocks(documents.developers!.content)];
      const kinds = new Set(all.map((b) => b.type === "list" ? `list:${b.ordered}` : b.type));
      for (
        const kind of [
          "heading",
          "paragraph",
          "quote",
          "list:true",
          "list:false",
          "example",
          "code",
        ]
      ) assert.ok(kinds.has(kind), kind);
      const headings = all.filter((b) => b.type === "heading");
      assert.ok(headings.some((h) => h.level === 2 && h.id));
      assert.ok(headings.some((h) => h.level === 3 && h.id));
      const inline = [
        ...inlines(documents.index!.content),
        ...inlines(documents.developers!.content),
      ];
      assert.ok(inline.some((i) => typeof i !== "string" && i.type === "link"));
      assert.ok(inline.some((i) => typeof i !== "string" && i.type === "strong"));
      assert.ok(inline.some((i) => typeof i === "string"));
      const nested = all.filter((b) => b.type === "example");
      assert.ok(nested.every((e) => /illustrative/i.test(e.title)), "examples are illustrative");
    });

    await t.step("every link to {base_url} in the documents answers 200", async () => {
      const hrefs = new Set<string>();
      for (const document of Object.values(documents)) {
        for (const href of Object.values(document.links)) hrefs.add(href);
        for (const i of inlines(document.content)) {
          if (typeof i !== "string" && i.type === "link") hrefs.add(i.href);
        }
      }
      const local = [...hrefs].filter((href) => href.startsWith(`${base}/`));
      assert.ok(local.length >= 8, `${local}`);
      for (const href of local) {
        const response = await fetch(href);
        await response.body?.cancel();
        assert.equal(response.status, 200, href);
      }
    });

    await t.step("HTML and Markdown contain every heading and code block of the JSON", async () => {
      for (const [name, htmlPath] of [["index", "/"], ["developers", "/developers"]] as const) {
        const html = await (await get(htmlPath)).text();
        const markdown = await (await get(`/${name}.md`)).text();
        const document = documents[name]!;
        assert.ok(html.includes(`<h1>${escapeHtml(document.title)}</h1>`));
        assert.ok(markdown.startsWith(`# ${escapeMarkdown(document.title)}\n`));
        for (const block of blocks(document.content)) {
          if (block.type === "heading") {
            const tag = `h${block.level}`;
            const id = block.id ? ` id="${block.id}"` : "";
            assert.ok(html.includes(`<${tag}${id}>${escapeHtml(block.text)}</${tag}>`), block.text);
            assert.ok(
              markdown.includes(`${"#".repeat(block.level)} ${escapeMarkdown(block.text)}\n`),
              block.text,
            );
          }
          if (block.type === "code") {
            assert.ok(html.includes(`${escapeHtml(block.text)}</code></pre>`), block.text);
            const quoted = (s: string) =>
              s.split("\n").map((l) => l === "" ? ">" : `> ${l}`).join("\n");
            assert.ok(
              markdown.includes(block.text) || markdown.includes(quoted(block.text)),
              block.text,
            );
          }
        }
      }
    });

    await t.step("the developer reference covers MCP rules, OAuth, every scope, errors", () => {
      const document = documents.developers!;
      const ids = [...blocks(document.content)].flatMap((b) => b.type === "heading" ? [b.id] : []);
      for (
        const id of [
          "endpoints",
          "mcp-rules",
          "mcp-2026",
          "oauth",
          "scopes",
          "errors",
          "limits",
          "versioning",
        ]
      ) {
        assert.ok(ids.includes(id), id);
      }
      const code = [...blocks(document.content)].flatMap((b) => b.type === "code" ? [b.text] : []);
      for (
        const needle of [
          '"method":"initialize"',
          '"method":"notifications/initialized"',
          '"params":{"cursor":',
          "text/event-stream",
          "code_challenge_method=S256",
          '"method":"server/discover"',
          "-H 'Mcp-Method: tools/list'",
          "-H 'Mcp-Name: list_scopes'",
          '"io.modelcontextprotocol/clientCapabilities":{}',
        ]
      ) assert.ok(code.some((c) => c.includes(needle)), needle);
      const lists = [...blocks(document.content)].flatMap((b) =>
        b.type === "list" ? b.items.map(text) : []
      );
      for (const [scope, meaning] of Object.entries(SCOPE_MEANINGS)) {
        assert.ok(lists.includes(`${scope}: ${meaning}.`), scope);
      }
      assert.ok(
        lists.some((item) =>
          item.startsWith("To get more scopes, send a new authorization request, never a refresh.")
        ),
        "how to get more scopes",
      );
      assert.ok(code.some((c) => c.includes("invalidateCredentials(")), "the SDK's way to step up");
    });

    await t.step(
      "the 2026-07-28 requests of the developer reference are answered as shown",
      async () => {
        const code = [...blocks(documents.developers!.content)].flatMap((b) =>
          b.type === "code" ? [b] : []
        );
        const requests = code.filter((c) => c.language === "sh" && c.text.includes("2026-07-28"));
        assert.equal(requests.length, 3);
        for (const { text } of requests) {
          const url = /^curl -sS (\S+)/.exec(text)![1]!;
          const headers = Object.fromEntries(
            [...text.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1]!, m[2]!]),
          );
          const body = /-d '([^']*)'/.exec(text)![1]!;
          const response = await fetch(url, { method: "POST", headers, body });
          assert.equal(response.status, 200, body);
          const answer = await response.json();
          assert.equal(answer.id, JSON.parse(body).id);
          assert.equal(answer.result?.resultType, "complete", JSON.stringify(answer));
          // The documented answer, where it shows one, is the answer but for what it elides.
          const shown = code[code.findIndex((c) => c.text === text) + 1];
          if (shown?.language !== "json" || !shown.text.includes('"supportedVersions"')) continue;
          assert.deepEqual(
            { ...answer.result, instructions: "…" },
            JSON.parse(shown.text).result,
          );
        }
      },
    );

    await t.step(
      "llms.txt links the connection guide, documents and MCP and states the rules",
      async () => {
        const llms = await (await get("/llms.txt")).text();
        for (
          const link of [
            `${server.authUrl}/llms.txt`,
            `${server.authUrl}/agents`,
            `${base}/index.json`,
            `${base}/developers.json`,
            `${base}/openapi.json`,
            `${server.apiUrl}/api/mcp`,
            `${server.apiUrl}/.well-known/oauth-protected-resource`,
          ]
        ) assert.ok(llms.includes(link), link);
        for (
          const rule of [
            /human decisions/,
            /no sandbox|There is no sandbox/i,
            /Never start a paid workflow merely to test connectivity/,
            /Never send a sign-in e-mail or create an account without the account holder's\s+authorization/,
            /grants no access/,
            /MCP 2026-07-28/,
          ]
        ) assert.match(llms, rule);
      },
    );

    await t.step(
      "openapi.json is the committed description with the origins filled in",
      async () => {
        const served = await (await get("/openapi.json")).text();
        const committed = await Deno.readTextFile(
          new URL("../../../static/openapi.json", import.meta.url),
        );
        assert.equal(served, fillPlaceholders(committed, server.config));
        assert.equal(JSON.parse(served).servers[0].url, base);
      },
    );

    await t.step("If-None-Match answers 304 without a body, for both variants", async () => {
      const identity = { "Accept-Encoding": "identity" };
      const first = await get("/developers.json", { headers: identity });
      await first.body?.cancel();
      const etag = first.headers.get("ETag")!;
      for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = await get("/developers.json", {
          headers: { ...identity, "If-None-Match": tag },
        });
        assert.equal(again.status, 304, tag);
        assert.equal(again.headers.get("ETag"), etag);
        assert.equal(await again.text(), "");
      }
      const gz = await get("/developers.json", { headers: { "Accept-Encoding": "gzip" } });
      await gz.body?.cancel();
      assert.equal(gz.headers.get("Content-Encoding"), "gzip");
      assert.equal(gz.headers.get("Vary"), "Accept-Encoding");
      const gzTag = gz.headers.get("ETag")!;
      assert.notEqual(gzTag, etag);
      const again = await get("/developers.json", { headers: { "If-None-Match": gzTag } });
      assert.equal(again.status, 304);
      await again.body?.cancel();
      const changed = await get("/developers.json", { headers: { "If-None-Match": '"stale"' } });
      assert.equal(changed.status, 200);
      await changed.body?.cancel();
    });

    await t.step("HEAD sends the headers and no body", async () => {
      const identity = { "Accept-Encoding": "identity" };
      const full = await get("/index.json", { headers: identity });
      const length = (await full.arrayBuffer()).byteLength;
      const head = await get("/index.json", { method: "HEAD", headers: identity });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get("Content-Length"), String(length));
      assert.equal(head.headers.get("ETag"), full.headers.get("ETag"));
      assert.equal(await head.text(), "");
      const health = await get("/health", { method: "HEAD" });
      assert.equal(health.status, 200);
      assert.equal(await health.text(), "");
    });

    await t.step("OPTIONS is a 204 CORS preflight", async () => {
      const response = await get("/index.json", {
        method: "OPTIONS",
        headers: { Origin: "https://elsewhere.example", "Access-Control-Request-Method": "GET" },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
      assert.match(response.headers.get("Access-Control-Allow-Methods")!, /GET/);
      assert.equal(await response.text(), "");
    });

    await t.step("unknown path 404, wrong method 405 with Allow", async () => {
      const missing = await get("/nope");
      assert.equal(missing.status, 404);
      await missing.body?.cancel();
      for (const method of ["POST", "PUT", "DELETE"]) {
        const wrong = await get("/index.json", { method, body: method === "DELETE" ? null : "x" });
        assert.equal(wrong.status, 405, method);
        assert.equal(wrong.headers.get("Allow"), "GET, HEAD, OPTIONS");
        await wrong.body?.cancel();
      }
    });

    await t.step("the other origins answer 404 for unknown paths", async () => {
      for (const origin of [server.authUrl, server.apiUrl]) {
        const response = await fetch(`${origin}/no-such-page`);
        assert.equal(response.status, 404, origin);
        await response.body?.cancel();
      }
    });

    await t.step("an unknown Host is 421", async () => {
      const port = Number(new URL(base).port);
      const answer = await rawRequest(
        port,
        "GET /health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
      );
      assert.match(answer, /^HTTP\/1\.1 421 /);
      const good = await rawRequest(
        port,
        `GET /health HTTP/1.1\r\nHost: ${new URL(base).host}\r\nConnection: close\r\n\r\n`,
      );
      assert.match(good, /^HTTP\/1\.1 200 /);
    });

    await t.step("HTML pages carry the security headers", async () => {
      for (const path of ["/", "/developers", "/contact", "/privacy", "/terms"]) {
        const response = await get(path);
        const page = await response.text();
        const csp = response.headers.get("Content-Security-Policy") ?? "";
        assert.match(csp, /default-src 'none'/, path);
        assert.match(csp, /frame-ancestors 'none'/, path);
        assert.equal(response.headers.get("X-Content-Type-Options"), "nosniff");
        assert.equal(response.headers.get("Referrer-Policy"), "no-referrer");
        assert.ok(!/<script/i.test(page), `${path} has no script`);
        for (const landmark of ["<header>", "<main>", "<footer>", `<nav aria-label="Site">`]) {
          assert.ok(page.includes(landmark), `${path} ${landmark}`);
        }
        assert.equal(page.match(/<h1>/g)?.length, 1, `${path} has one h1`);
      }
    });

    await t.step("one JSON log line per request, without the query", async () => {
      const before = server.logs.length;
      const response = await get("/index.json?code=secret-value");
      await response.body?.cancel();
      const lines = server.logs.slice(before).map((line) => JSON.parse(line));
      assert.equal(lines.length, 1);
      assert.equal(lines[0].method, "GET");
      assert.equal(lines[0].host, new URL(base).host);
      assert.equal(lines[0].path, "/index.json");
      assert.equal(lines[0].status, 200);
      assert.equal(typeof lines[0].ms, "number");
      assert.ok(!server.logs.slice(before).join("").includes("secret-value"));
    });
  } finally {
    await server.close();
  }
});
