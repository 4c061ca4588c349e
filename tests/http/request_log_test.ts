import assert from "node:assert/strict";
import { withRequestLog } from "../../src/http/request_log.ts";
import { createRouter } from "../../src/http/router.ts";

const context = { clientAddress: "127.0.0.1" };

Deno.test("request log: one JSON line with time, level, id, method, host, path without query, status, ms, client", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(
    () => Promise.resolve(new Response("ok", { status: 201 })),
    (line) => lines.push(line),
  );
  const request = new Request("http://www.example.com/path?code=secret", {
    headers: { Host: "www.example.com" },
  });
  const response = await handler(request, context);
  assert.equal(response.status, 201);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]!);
  assert.deepEqual(Object.keys(line), [
    "time",
    "level",
    "id",
    "method",
    "host",
    "path",
    "route",
    "status",
    "ms",
    "client",
  ]);
  assert.equal(new Date(line.time).toISOString(), line.time, "ISO 8601");
  assert.equal(line.level, "info");
  assert.match(line.id, /^[0-9a-f-]{36}$/);
  assert.equal(response.headers.get("X-Request-Id"), line.id);
  assert.equal(line.client, "127.0.0.1");
  assert.equal(line.method, "GET");
  assert.equal(line.path, "/path");
  assert.equal(line.route, "other", "no router matched");
  assert.equal(line.status, 201);
  assert.ok(!lines[0]!.includes("secret"));
});

Deno.test("request log: the route the router matched, never the raw path, in the line and to observe", async () => {
  const lines: string[] = [];
  const observed: [string | null, string, number][] = [];
  const handler = withRequestLog(
    createRouter({ "/approvals/*": { GET: () => Promise.resolve(new Response("ok")) } }),
    (line) => lines.push(line),
    (host, route, status) => observed.push([host, route, status]),
  );
  for (const path of ["/approvals/g1", "/approvals/g2", "/nope"]) {
    await (await handler(
      new Request(`http://x.test${path}`, { headers: { Host: "x.test" } }),
      { clientAddress: "127.0.0.1" },
    )).body?.cancel();
  }
  assert.deepEqual(lines.map((l) => JSON.parse(l).route), [
    "/approvals/*",
    "/approvals/*",
    "other",
  ]);
  assert.deepEqual(observed, [
    ["x.test", "/approvals/*", 200],
    ["x.test", "/approvals/*", 200],
    ["x.test", "other", 404],
  ]);
});

Deno.test("request log: every request gets its own id", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(() => Promise.resolve(new Response("ok")), (l) => lines.push(l));
  const ids = new Set<string | null>();
  for (let i = 0; i < 3; i++) {
    ids.add((await handler(new Request("http://x.test/"), context)).headers.get("X-Request-Id"));
  }
  assert.equal(ids.size, 3);
  assert.deepEqual(new Set(lines.map((l) => JSON.parse(l).id)), ids);
});

function explode(): never {
  throw new TypeError("boom");
}

Deno.test("request log: an unexpected error is a bare 500, logged with its stack but not the body", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(() => explode(), (line) => lines.push(line));
  const response = await handler(
    new Request("http://x.test/a", { method: "POST", body: "secret" }),
    context,
  );
  assert.equal(response.status, 500);
  assert.equal(await response.text(), "Internal server error\n", "no stack in the response");
  assert.equal(lines.length, 2);
  const { stack, time, id, ...rest } = JSON.parse(lines[0]!);
  assert.deepEqual(rest, { level: "error", message: "unhandled", error: "TypeError: boom" });
  assert.match(stack, /^TypeError: boom\n\s+at explode \(.*request_log_test\.ts:\d+:\d+\)/);
  assert.equal(new Date(time).toISOString(), time);
  const request = JSON.parse(lines[1]!);
  assert.equal(request.status, 500);
  assert.equal(request.level, "error");
  assert.equal(request.id, id, "the error line and the request line share the request id");
  assert.equal(response.headers.get("X-Request-Id"), id);
  assert.ok(!lines.join("").includes("secret"));
});

Deno.test("request log: a thrown non-error is logged as such, without a stack", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(() => Promise.reject("a string"), (line) => lines.push(line));
  assert.equal((await handler(new Request("http://x.test/a"), context)).status, 500);
  const { time: _time, id: _id, ...line } = JSON.parse(lines[0]!);
  assert.deepEqual(line, {
    level: "error",
    message: "unhandled",
    error: "non-error thrown",
  });
});
