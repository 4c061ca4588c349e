import assert from "node:assert/strict";
import { readBodyCapped } from "../../src/http/body.ts";
import { HttpError } from "../../src/http/errors.ts";

function chunked(chunks: string[]): Request {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  return new Request("http://x.test/", { method: "POST", body: stream });
}

Deno.test("readBodyCapped returns bodies up to the cap", async () => {
  const body = await readBodyCapped(chunked(["ab", "cd"]), 4);
  assert.equal(new TextDecoder().decode(body), "abcd");
  const empty = await readBodyCapped(new Request("http://x.test/"), 4);
  assert.equal(empty.byteLength, 0);
});

Deno.test("readBodyCapped refuses an announced or streamed body over the cap with 413", async () => {
  const announced = new Request("http://x.test/", {
    method: "POST",
    body: "12345",
    headers: { "Content-Length": "5" },
  });
  for (const request of [announced, chunked(["12", "34", "5"])]) {
    await assert.rejects(readBodyCapped(request, 4), (error: unknown) => {
      assert.ok(error instanceof HttpError);
      assert.equal(error.status, 413);
      assert.equal(error.message, "Cannot read request body: exceeds 4 bytes");
      return true;
    });
  }
});

Deno.test("readBodyCapped stops reading at the cap: later chunks are never pulled", async () => {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(3));
    },
  }, { highWaterMark: 0 });
  const request = new Request("http://x.test/", { method: "POST", body: stream });
  await assert.rejects(readBodyCapped(request, 5), HttpError);
  assert.ok(pulled <= 3, `pulled ${pulled}`);
});
