import assert from "node:assert/strict";
import {
  createStaticAsset,
  serveStaticAsset,
  staticAssetHandler,
} from "../../src/http/static_asset.ts";

const options = { cacheControl: "public, max-age=300", headers: { "X-Extra": "1" } };
const get = (headers: Record<string, string> = {}, method = "GET") =>
  new Request("http://x.test/doc", { method, headers });

Deno.test("small bodies have no gzip variant and no Vary", async () => {
  const asset = await createStaticAsset("small", "text/plain");
  assert.equal(asset.gzip, undefined);
  const response = serveStaticAsset(get({ "Accept-Encoding": "gzip" }), asset, options);
  assert.equal(response.headers.get("Vary"), null);
  assert.equal(response.headers.get("Content-Encoding"), null);
  assert.equal(response.headers.get("Content-Length"), "5");
  assert.equal(response.headers.get("X-Extra"), "1");
  assert.equal(await response.text(), "small");
});

Deno.test("large bodies: gzip when accepted, strong ETags per variant", async (t) => {
  const asset = await createStaticAsset("x".repeat(5000), "text/plain");
  assert.ok(asset.gzip);
  await t.step("identity without Accept-Encoding", () => {
    const response = serveStaticAsset(get(), asset, options);
    assert.equal(response.headers.get("ETag"), asset.etag);
    assert.equal(response.headers.get("Vary"), "Accept-Encoding");
    assert.equal(response.headers.get("Content-Length"), "5000");
  });
  const cases: [string, boolean][] = [
    ["gzip", true],
    ["br, gzip;q=0.5", true],
    ["*", true],
    ["gzip;q=0", false],
    ["identity", false],
  ];
  for (const [accept, gzip] of cases) {
    await t.step(`Accept-Encoding: ${accept}`, () => {
      const response = serveStaticAsset(get({ "Accept-Encoding": accept }), asset, options);
      assert.equal(response.headers.get("Content-Encoding"), gzip ? "gzip" : null);
      assert.equal(response.headers.get("ETag"), gzip ? asset.gzip!.etag : asset.etag);
    });
  }
});

Deno.test("If-None-Match: weak comparison, lists and *, 304 without body or length", async () => {
  const asset = await createStaticAsset("x".repeat(2000), "text/plain");
  for (const tag of [asset.etag, `W/${asset.etag}`, `"a", ${asset.gzip!.etag}`, "*"]) {
    const response = serveStaticAsset(get({ "If-None-Match": tag }), asset, options);
    assert.equal(response.status, 304, tag);
    assert.equal(response.body, null);
    assert.equal(response.headers.get("Content-Length"), null);
    assert.equal(response.headers.get("ETag"), asset.etag);
  }
  const stale = serveStaticAsset(get({ "If-None-Match": '"stale"' }), asset, options);
  assert.equal(stale.status, 200);
});

Deno.test("HEAD keeps the headers and drops the body", async () => {
  const asset = await createStaticAsset("hello", "text/plain");
  const response = serveStaticAsset(get({}, "HEAD"), asset, options);
  assert.equal(response.status, 200);
  assert.equal(response.body, null);
  assert.equal(response.headers.get("Content-Length"), "5");
});

Deno.test("the ETag is a digest of the bytes", async () => {
  const a = await createStaticAsset("same", "text/plain");
  const b = await createStaticAsset("same", "text/html");
  const c = await createStaticAsset("other", "text/plain");
  assert.equal(a.etag, b.etag);
  assert.notEqual(a.etag, c.etag);
});

Deno.test("staticAssetHandler: prepared answers, the same as serveStaticAsset, every time", async (t) => {
  const asset = await createStaticAsset("y".repeat(3000), "text/plain");
  const handler = staticAssetHandler(asset, options);
  const context = { clientAddress: "127.0.0.1" };
  const cases: [string, Record<string, string>, string][] = [
    ["identity", {}, "GET"],
    ["gzip", { "Accept-Encoding": "gzip" }, "GET"],
    ["HEAD", {}, "HEAD"],
    ["304 identity", { "If-None-Match": asset.etag }, "GET"],
    ["304 gzip", { "If-None-Match": asset.gzip!.etag, "Accept-Encoding": "gzip" }, "GET"],
  ];
  for (const [name, headers, method] of cases) {
    await t.step(name, async () => {
      const expected = serveStaticAsset(get(headers, method), asset, options);
      const expectedBody = new Uint8Array(await expected.arrayBuffer());
      // Several requests in a row: the prepared response must never be used up.
      for (let i = 0; i < 3; i++) {
        const response = await handler(get(headers, method), context);
        assert.equal(response.status, expected.status);
        assert.deepEqual([...response.headers], [...expected.headers]);
        assert.deepEqual(new Uint8Array(await response.arrayBuffer()), expectedBody);
      }
    });
  }
});
