import assert from "node:assert/strict";
import { createRouter, pathParams } from "../../src/http/router.ts";

const context = { clientAddress: "127.0.0.1" };
const text = (body: string) => () => Promise.resolve(new Response(body));
const call = (handler: ReturnType<typeof createRouter>, path: string, method = "GET") =>
  handler(new Request(`http://x.test${path}`, { method }), context);

Deno.test("router: exact paths, prefixes, 404, 405 with Allow, HEAD and OPTIONS", async (t) => {
  const router = createRouter({
    "/a": { GET: text("a"), POST: text("posted") },
    "/approvals/*": {
      GET: (request) => Promise.resolve(new Response(new URL(request.url).pathname)),
    },
    "/only-post": { POST: text("p") },
  });
  await t.step("exact path by method", async () => {
    assert.equal(await (await call(router, "/a")).text(), "a");
    assert.equal(await (await call(router, "/a", "POST")).text(), "posted");
  });
  await t.step("query strings do not change the route", async () => {
    assert.equal(await (await call(router, "/a?x=1")).text(), "a");
  });
  await t.step("prefix matches one further segment only", async () => {
    assert.equal(await (await call(router, "/approvals/g1")).text(), "/approvals/g1");
    assert.equal((await call(router, "/approvals/")).status, 404);
    assert.equal((await call(router, "/approvals/g1/x")).status, 404);
  });
  await t.step("unknown path is 404", async () => {
    assert.equal((await call(router, "/nope")).status, 404);
  });
  await t.step("wrong method is 405 with Allow", async () => {
    const response = await call(router, "/a", "DELETE");
    assert.equal(response.status, 405);
    assert.equal(response.headers.get("Allow"), "GET, HEAD, POST, OPTIONS");
    assert.equal((await call(router, "/only-post")).headers.get("Allow"), "POST, OPTIONS");
  });
  await t.step(
    "HEAD comes from GET: its fields, Content-Length included, without a body",
    async () => {
      const response = await call(router, "/a", "HEAD");
      assert.equal(response.status, 200);
      assert.equal(response.body, null);
      assert.equal(response.headers.get("Content-Type"), "text/plain;charset=UTF-8");
      assert.equal(response.headers.get("Content-Length"), "1", "RFC 9110 §9.3.2");
    },
  );
  await t.step("OPTIONS is derived: 204 with Allow", async () => {
    const response = await call(router, "/a", "OPTIONS");
    assert.equal(response.status, 204);
    assert.equal(response.headers.get("Allow"), "GET, HEAD, POST, OPTIONS");
  });
});

Deno.test("router: {name} segments match one segment anywhere, and pathParams reads them", async (t) => {
  const pattern = "/v1/businesses/{businessId}/workflow-runs/{runId}";
  const router = createRouter({
    [pattern]: {
      PATCH: (request) => Promise.resolve(Response.json(pathParams(pattern, request.url))),
    },
  });
  await t.step("each named segment is one non-empty segment", async () => {
    const response = await call(router, "/v1/businesses/b%201/workflow-runs/r1", "PATCH");
    assert.deepEqual(await response.json(), { businessId: "b 1", runId: "r1" });
    assert.equal((await call(router, "/v1/businesses//workflow-runs/r1", "PATCH")).status, 404);
    assert.equal((await call(router, "/v1/businesses/b/workflow-runs/r/x", "PATCH")).status, 404);
    assert.equal((await call(router, "/v1/businesses/b/other/r", "PATCH")).status, 404);
  });
  await t.step("a known pattern with another method is 405 with Allow", async () => {
    const response = await call(router, "/v1/businesses/b/workflow-runs/r");
    assert.equal(response.status, 405);
    assert.equal(response.headers.get("Allow"), "PATCH, OPTIONS");
  });
  await t.step("pathParams refuses a value that does not decode", () => {
    assert.equal(pathParams(pattern, "http://x.test/v1/businesses/%zz/workflow-runs/r"), null);
    assert.equal(pathParams(pattern, "http://x.test/v1/businesses/b"), null);
  });
});

Deno.test("router: custom answers for 404 and 405", async () => {
  const router = createRouter({ "/a": { GET: text("a") } }, {
    notFound: () => Promise.resolve(new Response("custom 404", { status: 404 })),
    methodNotAllowed: (_request, allow) => new Response(`allow ${allow}`, { status: 405 }),
  });
  assert.equal(await (await call(router, "/b")).text(), "custom 404");
  assert.equal(await (await call(router, "/a", "POST")).text(), "allow GET, HEAD, OPTIONS");
});

Deno.test("router: method names are never looked up on the prototype", async (t) => {
  const router = createRouter({ "/a": { GET: text("a") } });
  for (const method of ["constructor", "toString", "hasOwnProperty", "__proto__", "PROPFIND"]) {
    await t.step(method, async () => {
      const response = await call(router, "/a", method);
      assert.equal(response.status, 405);
      assert.equal(response.headers.get("Allow"), "GET, HEAD, OPTIONS");
      await response.body?.cancel();
    });
  }
});

Deno.test("router: a path may answer other methods itself", async () => {
  const router = createRouter({
    "/rpc": {
      POST: text("ok"),
      methodNotAllowed: (request, allow) =>
        new Response(`${request.method} refused; allow ${allow}`, { status: 405 }),
    },
    "/plain": { GET: text("p") },
  });
  const refused = await call(router, "/rpc", "PUT");
  assert.equal(await refused.text(), "PUT refused; allow POST, OPTIONS");
  assert.equal((await call(router, "/rpc", "OPTIONS")).status, 204, "OPTIONS stays derived");
  assert.equal(await (await call(router, "/plain", "PUT")).text(), "Method not allowed\n");
});
