// The event-stream parser the upstream client reads SSE answers with, fed chunk by chunk.
import assert from "node:assert/strict";
import { createSseParser, encodeSseEvent } from "../../src/mcp/sse.ts";

Deno.test("each event's data comes out of the chunk that completes it, at once", () => {
  const parse = createSseParser();
  assert.deepEqual(parse('event: message\ndata: {"a":'), []);
  assert.deepEqual(parse("1}\n"), []);
  assert.deepEqual(parse("\ndata: two\n\n"), ['{"a":1}', "two"]);
});

Deno.test("CRLF, CR and LF end lines, a CRLF split between chunks included", () => {
  const parse = createSseParser();
  assert.deepEqual(parse("data: a\r"), []);
  assert.deepEqual(parse("\n\r\n"), ["a"]);
  assert.deepEqual(parse("data: b\r\rdata: c\n\n"), ["b", "c"]);
});

Deno.test("comments and other fields are no data; data lines join with LF", () => {
  const parse = createSseParser();
  assert.deepEqual(parse(": keep-alive\n\nid: 7\nevent: x\nretry: 5\n\n"), []);
  assert.deepEqual(parse("data: one\ndata:two\ndata\n\n"), ["one\ntwo\n"]);
});

Deno.test("an event cut off by the end of the stream is not given out", () => {
  const parse = createSseParser();
  assert.deepEqual(parse(encodeSseEvent("first") + "data: cut"), ["first"]);
});
