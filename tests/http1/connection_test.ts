// HTTP/1.1 on the wire, through serve() on a loopback port, with raw sockets: what a fetch
// client hides (pipelining, chunked framing, 100 Continue, when a connection ends).
import assert from "node:assert/strict";
import { readBodyCapped } from "../../src/http/body.ts";
import { HttpError } from "../../src/http/errors.ts";
import { MAX_HEAD_BYTES } from "../../src/http1/byte_reader.ts";
import { type RunningServer, serve } from "../../src/server.ts";

const encoder = new TextEncoder();

interface Probe {
  readonly port: number;
  readonly server: RunningServer;
  /** Requests the handler saw. */
  readonly seen: string[];
  /** Statuses the handler answered for bodies it could not read. */
  readonly refused: number[];
  /** Resolves the pending `/slow` request. */
  release(): void;
}

/** Echoes method, path and body; `/refuse` answers 413 unread, `/stream` streams two chunks. */
function start(limits: { readTimeoutMs?: number; idleTimeoutMs?: number } = {}): Probe {
  const seen: string[] = [];
  const refused: number[] = [];
  const slow = Promise.withResolvers<void>();
  const server = serve(
    {
      listen: [{ hostname: "127.0.0.1", port: 0 }],
      trustProxy: false,
      maxConnections: 100,
      readTimeoutMs: limits.readTimeoutMs ?? 10_000,
      idleTimeoutMs: limits.idleTimeoutMs ?? 5_000,
    },
    async (request) => {
      const path = new URL(request.url).pathname;
      seen.push(`${request.method} ${path}`);
      if (path === "/refuse") {
        return new Response("no\n", { status: 413, headers: { Connection: "close" } });
      }
      if (path === "/stream") {
        const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
        const writer = writable.getWriter();
        (async () => {
          await writer.write(encoder.encode("a"));
          await new Promise((resolve) => setTimeout(resolve, 10));
          await writer.write(encoder.encode("b"));
          await writer.close();
        })();
        return new Response(readable, { headers: { "Content-Type": "text/event-stream" } });
      }
      if (path === "/slow") await slow.promise;
      let body: string;
      try {
        body = new TextDecoder().decode(await readBodyCapped(request, 1 << 20));
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        refused.push(error.status);
        return new Response(error.message, { status: error.status });
      }
      return new Response(`${request.method} ${path} ${body}`, {
        headers: { "Content-Length": "999" }, // wrong on purpose: the layer frames the body
      });
    },
    () => {},
  );
  return {
    port: server.addresses[0]!.port,
    server,
    seen,
    refused,
    release: () => slow.resolve(),
  };
}

/** Everything the server sends until it closes the connection (5 s at most, then a failure). */
async function readToEnd(conn: Deno.Conn): Promise<string> {
  const chunks: string[] = [];
  const buffer = new Uint8Array(64 * 1024);
  const decoder = new TextDecoder();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, 5000);
  try {
    for (;;) {
      const n = await conn.read(buffer).catch(() => {
        if (timedOut) throw new Error("still open after 5 s");
        return null; // reset by the server
      });
      if (n === null) break;
      chunks.push(decoder.decode(buffer.subarray(0, n), { stream: true }));
    }
  } finally {
    clearTimeout(timer);
  }
  try {
    conn.close();
  } catch {
    // closed by the timer
  }
  return chunks.join("");
}

async function exchange(port: number, ...parts: string[]): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  for (const part of parts) await conn.write(encoder.encode(part));
  return await readToEnd(conn);
}

/** Reads until `text` has arrived, returning everything read. */
async function readUntil(conn: Deno.Conn, text: string): Promise<string> {
  let received = "";
  const buffer = new Uint8Array(4096);
  while (!received.includes(text)) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed before ${JSON.stringify(text)}: ${received}`);
    received += new TextDecoder().decode(buffer.subarray(0, n));
  }
  return received;
}

const bodies = (text: string) => text.split("\r\n\r\n").slice(1).map((b) => b.split("HTTP/1.1")[0]);

Deno.test("requests on one connection are answered in turn", async (t) => {
  const probe = start();
  try {
    await t.step("pipelined requests, each framed by Content-Length", async () => {
      const text = await exchange(
        probe.port,
        "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
          "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
          "\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      assert.deepEqual(bodies(text), ["GET /a ", "POST /b hello", "GET /c "]);
      assert.equal(text.match(/content-length: /g)?.length, 3);
      assert.match(text, /content-length: 13\r\n/);
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(text, /\r\ndate: \w{3}, \d\d \w{3} \d{4} [\d:]{8} GMT\r\n/);
      assert.equal(text.match(/connection: close/g)?.length, 1);
    });

    await t.step("a chunked body is decoded; extensions and trailers are dropped", async () => {
      const text = await exchange(
        probe.port,
        "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        "5;name=value\r\nhello\r\n",
        "6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
      );
      assert.deepEqual(bodies(text), ["POST /c hello world"]);
    });

    await t.step("HEAD gets the fields without content; the connection goes on", async () => {
      const text = await exchange(
        probe.port,
        "HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /h HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      const [head, get] = text.split(/(?=HTTP\/1\.1 )/);
      assert.match(head!, /^HTTP\/1\.1 200 OK\r\n[^]*content-length: 999\r\n\r\n$/);
      assert.match(get!, /\r\n\r\nGET \/h $/);
    });

    await t.step("empty lines before a request line are ignored (RFC 9112 §2.2)", async () => {
      const text = await exchange(
        probe.port,
        "\r\n\r\nGET /e HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      );
      assert.deepEqual(bodies(text), ["GET /e "]);
    });

    await t.step("HTTP/1.0 is answered and closed", async () => {
      const text = await exchange(probe.port, "GET /old HTTP/1.0\r\nHost: x\r\n\r\n");
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n[^]*connection: close\r\n\r\nGET \/old $/);
    });
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("a streamed response is chunked, or delimited by closing for HTTP/1.0", async () => {
  const probe = start();
  try {
    const chunked = await exchange(
      probe.port,
      "GET /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert.match(
      chunked,
      /transfer-encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\nHTTP\/1\.1 200/,
    );
    assert.doesNotMatch(chunked.split("0\r\n\r\n")[0]!, /content-length/);
    const old = await exchange(probe.port, "GET /stream HTTP/1.0\r\nHost: x\r\n\r\n");
    assert.match(old, /connection: close\r\n\r\nab$/);
    assert.doesNotMatch(old, /transfer-encoding/);
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("Expect: 100-continue gets 100 Continue only when the handler reads", async () => {
  const probe = start();
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: probe.port });
    await conn.write(encoder.encode(
      "POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\n",
    ));
    assert.equal(await readUntil(conn, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
    await conn.write(encoder.encode("hi"));
    assert.match(await readToEnd(conn), /^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nPOST \/x hi$/);

    const refused = await exchange(
      probe.port,
      "POST /refuse HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2000\r\n\r\n",
    );
    assert.match(
      refused,
      /^HTTP\/1\.1 413 Content Too Large\r\n[^]*connection: close\r\n\r\nno\n$/,
    );
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("a body the handler leaves unread ends the connection after the answer", async () => {
  const probe = start();
  try {
    const text = await exchange(
      probe.port,
      "POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + "x".repeat(1000),
      // Were the connection kept, these bytes would be read as the next request.
      "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    assert.match(text, /^HTTP\/1\.1 413 [^]*connection: close\r\n\r\nno\n$/);
    assert.deepEqual(probe.seen, ["POST /refuse"]);
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("requests outside HTTP/1.1 are refused before the handler, and the connection ends", async (t) => {
  const probe = start();
  try {
    const cases: [string, string, RegExp][] = [
      [
        "no Host",
        "GET / HTTP/1.1\r\n\r\n",
        /^HTTP\/1\.1 400 Bad Request\r\n[^]*Bad request: missing Host header\n$/,
      ],
      [
        "both framings (smuggling, RFC 9112 §6.1)",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        /^HTTP\/1\.1 400 [^]*both Transfer-Encoding and Content-Length\n$/,
      ],
      [
        "a head over the cap",
        `GET / HTTP/1.1\r\nHost: x\r\nX: ${"x".repeat(MAX_HEAD_BYTES)}\r\n\r\n`,
        /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n[^]*exceeds 16384 bytes\n$/,
      ],
      [
        "TRACE",
        "TRACE / HTTP/1.1\r\nHost: x\r\n\r\n",
        /^HTTP\/1\.1 501 [^]*Method not implemented: TRACE\n$/,
      ],
      ["HTTP/2 prior knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", /^HTTP\/1\.1 505 /],
      [
        "a bad URL",
        "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n",
        /^HTTP\/1\.1 400 [^]*malformed request line\n$/,
      ],
      [
        "a bad port",
        "GET / HTTP/1.1\r\nHost: x:99999\r\n\r\n",
        /^HTTP\/1\.1 400 [^]*malformed request target\n$/,
      ],
    ];
    for (const [name, request, expected] of cases) {
      await t.step(name, async () => {
        const text = await exchange(probe.port, request, "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
        assert.match(text, expected);
        assert.match(text, /\r\nconnection: close\r\n/);
      });
    }
    await t.step("a broken chunked body is the handler's 400", async () => {
      const text = await exchange(
        probe.port,
        "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      );
      assert.match(text, /^HTTP\/1\.1 400 [^]*connection: close\r\n[^]*malformed chunk size$/);
      assert.deepEqual(probe.refused, [400]);
    });
    assert.deepEqual(probe.seen, ["POST /c"]);
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("deadlines close a connection that stalls", async (t) => {
  const probe = start({ readTimeoutMs: 200, idleTimeoutMs: 200 });
  try {
    await t.step("a head that never completes", async () => {
      assert.equal(await exchange(probe.port, "GET / HT"), "");
    });
    await t.step("a body that never completes: the handler answers 408", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: probe.port });
      await conn.write(
        encoder.encode("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345"),
      );
      assert.equal(await readToEnd(conn), "");
      assert.deepEqual(probe.seen, ["POST /b"]);
      assert.deepEqual(probe.refused, [408]);
    });
    await t.step("an idle keep-alive connection", async () => {
      const text = await exchange(probe.port, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n");
      assert.deepEqual(bodies(text), ["GET /k "]);
      assert.doesNotMatch(text, /connection: close/);
    });
  } finally {
    await probe.server.shutdown();
  }
});

Deno.test("shutdown closes idle connections and lets a request in flight finish", async () => {
  const probe = start();
  const idle = await Deno.connect({ hostname: "127.0.0.1", port: probe.port });
  await idle.write(encoder.encode("GET /i HTTP/1.1\r\nHost: x\r\n\r\n"));
  await readUntil(idle, "GET /i ");
  const busy = await Deno.connect({ hostname: "127.0.0.1", port: probe.port });
  await busy.write(encoder.encode("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  while (!probe.seen.includes("GET /slow")) await new Promise((r) => setTimeout(r, 5));
  const stopped = probe.server.shutdown();
  assert.equal(await readToEnd(idle), "");
  probe.release();
  assert.match(await readToEnd(busy), /^HTTP\/1\.1 200 [^]*connection: close\r\n\r\nGET \/slow $/);
  await stopped;
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port: probe.port }));
});
