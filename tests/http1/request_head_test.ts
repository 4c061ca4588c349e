import assert from "node:assert/strict";
import { HttpError } from "../../src/http/errors.ts";
import { MAX_FIELDS, parseRequestHead } from "../../src/http1/request_head.ts";

const head = (...lines: string[]) => lines.join("\r\n");

Deno.test("a request head gives the URL, fields, framing and connection semantics", async (t) => {
  await t.step("origin-form GET on HTTP/1.1 keeps the connection", () => {
    const parsed = parseRequestHead(
      head("GET /health?x=1 HTTP/1.1", "Host: 127.0.0.1:8000", "Accept:  */* "),
    );
    assert.deepEqual(parsed, {
      method: "GET",
      url: "http://127.0.0.1:8000/health?x=1",
      minorVersion: 1,
      fields: [["Host", "127.0.0.1:8000"], ["Accept", "*/*"]],
      framing: { kind: "none" },
      keepAlive: true,
      expectContinue: false,
    });
  });

  const cases: [string, string, Partial<ReturnType<typeof parseRequestHead>>][] = [
    [
      "absolute-form wins over Host (RFC 9112 §3.2.2)",
      head("GET http://www.example.com/x HTTP/1.1", "Host: other.example"),
      { url: "http://www.example.com/x" },
    ],
    ["HTTP/1.0 closes", head("GET / HTTP/1.0", "Host: a"), { minorVersion: 0, keepAlive: false }],
    ["Connection: close", head("GET / HTTP/1.1", "Host: a", "Connection: TE, Close"), {
      keepAlive: false,
    }],
    ["Content-Length", head("POST / HTTP/1.1", "Host: a", "Content-Length: 12"), {
      framing: { kind: "length", length: 12 },
    }],
    ["Content-Length 0 is no body", head("POST / HTTP/1.1", "Host: a", "Content-Length: 0"), {
      framing: { kind: "none" },
    }],
    [
      "identical Content-Length values (RFC 9110 §8.6)",
      head("POST / HTTP/1.1", "Host: a", "Content-Length: 5, 5", "Content-Length: 5"),
      { framing: { kind: "length", length: 5 } },
    ],
    ["chunked", head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: Chunked"), {
      framing: { kind: "chunked" },
    }],
    ["100-continue", head("POST / HTTP/1.1", "Host: a", "Expect: 100-Continue"), {
      expectContinue: true,
    }],
    [
      "100-continue ignored on HTTP/1.0",
      head("POST / HTTP/1.0", "Host: a", "Expect: 100-continue"),
      {
        expectContinue: false,
      },
    ],
    ["obs-text in a value is kept byte for byte", head("GET / HTTP/1.1", "Host: a", "X: caf\xe9"), {
      fields: [["Host", "a"], ["X", "caf\xe9"]],
    }],
    ["an IPv6 literal Host", head("GET / HTTP/1.1", "Host: [::1]:8002"), {
      url: "http://[::1]:8002/",
    }],
  ];
  for (const [name, text, expected] of cases) {
    await t.step(name, () => {
      const parsed = parseRequestHead(text);
      for (const [key, value] of Object.entries(expected)) {
        assert.deepEqual(parsed[key as keyof typeof parsed], value, key);
      }
    });
  }
});

Deno.test("a head outside the grammar is refused with its status and the reason", async (t) => {
  const cases: [string, string, number, RegExp][] = [
    ["garbage", "hello", 400, /malformed request line/],
    ["two spaces", head("GET  / HTTP/1.1", "Host: a"), 400, /malformed request line/],
    ["HTTP/2 preface", head("PRI * HTTP/2.0", "", "SM"), 505, /HTTP\/2\.0/],
    ["missing Host (RFC 9112 §3.2)", head("GET / HTTP/1.1", "Accept: */*"), 400, /missing Host/],
    ["two Host fields", head("GET / HTTP/1.1", "Host: a", "Host: b"), 400, /more than one Host/],
    ["Host with a path", head("GET / HTTP/1.1", "Host: a/b"), 400, /malformed Host/],
    ["Host with userinfo", head("GET / HTTP/1.1", "Host: u@a"), 400, /malformed Host/],
    ["asterisk-form", head("OPTIONS * HTTP/1.1", "Host: a"), 400, /path or an absolute/],
    ["authority-form", head("CONNECT a:443 HTTP/1.1", "Host: a"), 400, /path or an absolute/],
    ["obs-fold (§5.2)", head("GET / HTTP/1.1", "Host: a", "X: 1", " 2"), 400, /line folding/],
    [
      "whitespace before the colon (§5.1)",
      head("GET / HTTP/1.1", "Host : a"),
      400,
      /whitespace before the colon of "Host"/,
    ],
    ["no colon", head("GET / HTTP/1.1", "Host: a", "nonsense"), 400, /without a field name/],
    ["bad name", head("GET / HTTP/1.1", "Host: a", "X(y): 1"), 400, /field name/],
    ["control character", head("GET / HTTP/1.1", "Host: a", "X: a\x00b"), 400, /value of X/],
    [
      "Transfer-Encoding and Content-Length (§6.1)",
      head("POST / HTTP/1.1", "Host: a", "Content-Length: 3", "Transfer-Encoding: chunked"),
      400,
      /both Transfer-Encoding and Content-Length/,
    ],
    [
      "chunked not last (§6.3)",
      head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: chunked, gzip"),
      400,
      /must end with chunked/,
    ],
    [
      "an unknown coding",
      head("POST / HTTP/1.1", "Host: a", "Transfer-Encoding: gzip, chunked"),
      501,
      /gzip, chunked/,
    ],
    [
      "Transfer-Encoding on HTTP/1.0",
      head("POST / HTTP/1.0", "Host: a", "Transfer-Encoding: chunked"),
      400,
      /HTTP\/1\.0/,
    ],
    [
      "differing Content-Length values",
      head("POST / HTTP/1.1", "Host: a", "Content-Length: 5", "Content-Length: 6"),
      400,
      /invalid Content-Length/,
    ],
    [
      "a signed Content-Length",
      head("POST / HTTP/1.1", "Host: a", "Content-Length: +5"),
      400,
      /invalid Content-Length/,
    ],
    [
      "too many fields",
      head(
        "GET / HTTP/1.1",
        "Host: a",
        ...Array.from({ length: MAX_FIELDS }, (_, i) => `X${i}: 1`),
      ),
      431,
      /more than 100 fields/,
    ],
  ];
  for (const [name, text, status, message] of cases) {
    await t.step(name, () => {
      assert.throws(() => parseRequestHead(text), (error: unknown) => {
        assert.ok(error instanceof HttpError);
        assert.equal(error.status, status);
        assert.match(error.message, message);
        return true;
      });
    });
  }
});
