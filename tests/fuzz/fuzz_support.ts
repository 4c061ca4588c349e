// Shared parts of the property-based fuzz tests: one seed per run, hostile text, and the
// checks every HTTP answer must pass whatever was sent.
import { readCapped } from "../../src/http/body.ts";
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import type { TestApp } from "../blackbox/support/harness.ts";

/**
 * Every property runs from this seed, so a run is reproducible: fast-check prints the seed
 * and the path of a failing case, and `FUZZ_SEED=<seed>` replays it.
 */
export const FUZZ_SEED = _integerFromEnv("FUZZ_SEED", 20250808);
/** `FUZZ_SCALE=10` runs ten times as many cases, for a longer hunt by hand. */
const FUZZ_SCALE = _integerFromEnv("FUZZ_SCALE", 1);

/** fast-check parameters: the run's seed and `runs` cases (times FUZZ_SCALE). */
export function fuzzRuns<T>(runs: number): fc.Parameters<T> {
  return { seed: FUZZ_SEED, numRuns: runs * FUZZ_SCALE };
}

/** Characters that break markup, URLs, headers, JSON and parsers, mixed into text. */
const HOSTILE_PIECES = [
  "<",
  ">",
  "&",
  '"',
  "'",
  "<script>alert(1)</script>",
  "</code></pre>",
  '"><img src=x onerror=alert(1)>',
  "&amp;",
  "\\",
  "`",
  "\n",
  "\r\n",
  "\t",
  "\u0000",
  "\u2028",
  "\ud800",
  "\ufeff",
  "é",
  "😀",
  "%",
  "%00",
  "%zz",
  "#",
  "?",
  "/",
  "..",
  ":",
  "@",
  "*",
  " ",
  "+",
  "=",
  "__proto__",
  "constructor",
];

/** Short text, often carrying pieces of markup, escapes and odd code points. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 10 }),
  fc.array(fc.oneof(fc.constantFrom(...HOSTILE_PIECES), fc.string({ maxLength: 4 })), {
    maxLength: 6,
  }).map((parts) => parts.join("")),
);

/** Header values a client can send (a Headers object refuses control characters). */
export const headerText: fc.Arbitrary<string> = hostileText.map((s) =>
  s.replace(/[^\x20-\x7e]/g, "").trim()
);

/** Body sizes just around a cap and anywhere up to four times it. */
export function sizesAround(cap: number, min: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: cap - 64, max: cap + 64 }),
    fc.integer({ min, max: 4 * cap }),
  );
}

/** How a body travels: with Content-Length, as a stream of chunks, or as a string. */
export const framing = fc.record({
  how: fc.constantFrom("Content-Length", "stream", "string"),
  chunk: fc.integer({ min: 1, max: 8192 }),
});

/** `text` as a request body framed as `how` says, with `headers` added. */
export function framedBody(
  text: string,
  { how, chunk }: { how: string; chunk: number },
  headers: Record<string, string>,
): RequestInit {
  const bytes = new TextEncoder().encode(text);
  if (how === "Content-Length") {
    return {
      method: "POST",
      headers: { ...headers, "Content-Length": String(bytes.length) },
      body: text,
    };
  }
  if (how === "string") return { method: "POST", headers, body: text };
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset += chunk));
    },
  });
  return { method: "POST", headers, body };
}

/**
 * The body of a response, read to the end but refused past `maxBytes`: a bounded request
 * must get a bounded answer.
 */
export async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const body = await readCapped(response, maxBytes);
  if (!body.ok) {
    assert.fail(
      `the response body ${
        body.problem === "too-large" ? `exceeds ${maxBytes} bytes` : "broke off"
      }`,
    );
  }
  return new TextDecoder().decode(body.bytes);
}

/** A request to the in-process app, with the `Host` of `url` as a client would send it. */
export function sendTo(app: TestApp) {
  return (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    headers.set("Host", new URL(url).host);
    return app.handler(new Request(url, { ...init, headers }), { clientAddress: "192.0.2.1" });
  };
}

/** No 5xx, whatever was sent: the server either answers or refuses precisely. */
export function assertStatusIn(response: Response, allowed: readonly number[]): void {
  assert.ok(
    allowed.includes(response.status),
    `status ${response.status} is not one of ${allowed.join(", ")}`,
  );
}

function _integerFromEnv(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return fallback;
  if (!/^-?\d+$/.test(raw)) {
    throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}
