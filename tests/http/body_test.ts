import assert from "node:assert/strict";
import { readBodyCapped, readCapped } from "../../src/http/body.ts";
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

/** A body that sends `sent`, then breaks off the way a reset connection does. */
function brokenOff(sent: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(sent));
      controller.error(new TypeError("error reading a body from connection"));
    },
  });
}

Deno.test("readBodyCapped refuses a body cut short with 400, announced or chunked", async () => {
  const announced = new Request("http://x.test/", {
    method: "POST",
    body: brokenOff("email="),
    headers: { "Content-Length": "1000" },
  });
  const chunkedBody = new Request("http://x.test/", { method: "POST", body: brokenOff("email=") });
  for (const request of [announced, chunkedBody]) {
    await assert.rejects(readBodyCapped(request, 4096), (error: unknown) => {
      assert.ok(error instanceof HttpError);
      assert.equal(error.status, 400);
      assert.equal(error.message, "Cannot read request body: it ended before it was complete");
      assert.deepEqual(error.headers, { Connection: "close" });
      return true;
    });
  }
});

Deno.test("readCapped reads fetched responses under the same cap", async (t) => {
  await t.step("a whole body", async () => {
    const read = await readCapped(new Response(new Blob(["abcd"]).stream()), 4);
    assert.ok(read.ok);
    assert.equal(new TextDecoder().decode(read.bytes), "abcd");
  });
  await t.step("too large, announced or streamed", async () => {
    const announced = new Response("12345", { headers: { "Content-Length": "5" } });
    for (const response of [announced, new Response(new Blob(["12345"]).stream())]) {
      assert.deepEqual(await readCapped(response, 4), { ok: false, problem: "too-large" });
    }
  });
  await t.step("a stream that breaks off is incomplete, not an exception", async () => {
    assert.deepEqual(await readCapped(new Response(brokenOff("{")), 4096), {
      ok: false,
      problem: "incomplete",
    });
  });
});
