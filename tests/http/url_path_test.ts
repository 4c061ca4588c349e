import assert from "node:assert/strict";
import { pathOf } from "../../src/http/url_path.ts";

Deno.test("pathOf agrees with new URL().pathname on request URLs", () => {
  const urls = [
    "http://x.test",
    "http://x.test/",
    "http://x.test/a/b?c=d#e",
    "http://x.test:8000/a#frag?not-query",
    "https://user:pw@x.test/p%20q?x=/y",
    "http://[::1]:8000/api/mcp?",
    "http://x.test/a/../b/./c",
  ];
  for (const raw of urls) {
    const url = new Request(raw).url;
    assert.equal(pathOf(url), new URL(url).pathname, raw);
  }
});
