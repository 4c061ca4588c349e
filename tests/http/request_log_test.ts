import assert from "node:assert/strict";
import { withRequestLog } from "../../src/http/request_log.ts";

const context = { clientAddress: "127.0.0.1" };

Deno.test("request log: one JSON line with method, host, path without query, status, ms", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(
    () => Promise.resolve(new Response("ok", { status: 201 })),
    (line) => lines.push(line),
  );
  const request = new Request("http://www.example.com/path?code=secret", {
    headers: { Host: "www.example.com" },
  });
  assert.equal((await handler(request, context)).status, 201);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]!);
  assert.deepEqual(Object.keys(line), ["method", "host", "path", "status", "ms"]);
  assert.equal(line.method, "GET");
  assert.equal(line.path, "/path");
  assert.equal(line.status, 201);
  assert.ok(!lines[0]!.includes("secret"));
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
  const { stack, ...rest } = JSON.parse(lines[0]!);
  assert.deepEqual(rest, { level: "error", message: "unhandled", error: "TypeError: boom" });
  assert.match(stack, /^TypeError: boom\n\s+at explode \(.*request_log_test\.ts:\d+:\d+\)/);
  assert.equal(JSON.parse(lines[1]!).status, 500);
  assert.ok(!lines.join("").includes("secret"));
});

Deno.test("request log: a thrown non-error is logged as such, without a stack", async () => {
  const lines: string[] = [];
  const handler = withRequestLog(() => Promise.reject("a string"), (line) => lines.push(line));
  assert.equal((await handler(new Request("http://x.test/a"), context)).status, 500);
  assert.deepEqual(JSON.parse(lines[0]!), {
    level: "error",
    message: "unhandled",
    error: "non-error thrown",
  });
});
