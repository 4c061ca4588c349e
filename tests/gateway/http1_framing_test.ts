// How the gateway's own HTTP/1.1 client reads an answer's framing from raw loopback listeners:
// chunked bodies however their bytes arrive, the caps on heads and chunk lines, a body longer
// than its length, the framing fields in any spelling, and header values it refuses to send.
import assert from "node:assert/strict";
import { createHttp1Fetch } from "../../src/gateway/http1.ts";
import { POST, rawServer, readRequest, write } from "./http1_raw_server.ts";

Deno.test("a chunked answer's chunks are handed on as they arrive", async () => {
  const { promise: next, resolve: sendNext } = Promise.withResolvers<void>();
  const server = rawServer(async (conn) => {
    await write(
      conn,
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "6;ext=1\r\nfirst\n\r\n",
    );
    await next;
    await write(conn, "7\r\nsecond\n\r\n0\r\nX-Trailer: t\r\n\r\n");
  });
  const fetch1 = createHttp1Fetch();
  try {
    const response = await fetch1(server.url, POST);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    // The server sends the second chunk only after the first was read here.
    assert.deepEqual(await reader.read(), { done: false, value: "first\n" });
    sendNext();
    assert.deepEqual(await reader.read(), { done: false, value: "second\n" });
    assert.deepEqual(await reader.read(), { done: true, value: undefined });
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a head past the cap is an error, not an ever-growing buffer", async () => {
  const server = rawServer(async (conn) => {
    await write(conn, `HTTP/1.1 200 OK\r\nX-Pad: ${"x".repeat(70_000)}\r\n\r\n`);
  });
  const fetch1 = createHttp1Fetch();
  try {
    await assert.rejects(fetch1(server.url, POST), (error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /head exceeds 65536 bytes/);
      return true;
    });
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a body longer than its Content-Length is cut at the length, and its connection not reused", async () => {
  const server = rawServer(async (conn) => {
    // Kept open: a client that reused it would read EXTRA as the next answer's start.
    for (let request = "first"; request !== ""; request = await readRequest(conn)) {
      await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloEXTRA");
    }
  });
  const fetch1 = createHttp1Fetch();
  try {
    assert.equal(await (await fetch1(server.url, POST)).text(), "hello");
    assert.equal(await (await fetch1(server.url, POST)).text(), "hello");
    assert.equal(server.connections, 2);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("the framing fields decide the body and the connection, in any spelling and repeated", async () => {
  // Each connection answers its requests in turn from this list: one answer per request.
  const answers = [
    // Repeated equal lengths are one length; `CONNECTION: Close` ends the connection.
    "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nContent-Length: 2\r\nCONNECTION: Close\r\n\r\nok",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nconnection: keep-alive\r\n\r\nyes",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nno!",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-encoding: gzip\r\n\r\nno",
    "HTTP/1.1 200 OK\r\ncontent-encoding: Identity\r\nContent-Length: 2\r\n\r\nok",
  ];
  let next = 0;
  const server = rawServer(async (conn) => {
    for (let request = "first"; request !== ""; request = await readRequest(conn)) {
      await write(conn, answers[next++]!);
    }
  });
  const fetch1 = createHttp1Fetch();
  // A framing misread waits for bytes that never come: each request gives up instead.
  const post = () => fetch1(server.url, { ...POST, signal: AbortSignal.timeout(2_000) });
  try {
    assert.equal(await (await post()).text(), "ok");
    assert.equal(await (await post()).text(), "yes");
    assert.equal(await (await post()).text(), "yes");
    assert.equal(server.connections, 2, "closed after the first answer, kept after the second");
    await assert.rejects(post(), /Content-Length is invalid/);
    await assert.rejects(post(), /compressed/);
    assert.equal(await (await post()).text(), "ok");
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a header value with a line break is refused without quoting it", async () => {
  const fetch1 = createHttp1Fetch();
  await assert.rejects(
    fetch1("http://127.0.0.1:9/", {
      method: "POST",
      headers: { Authorization: "Bearer s3cret\r\nX-Evil: 1" },
    }),
    (error) => {
      assert.ok(error instanceof TypeError);
      assert.doesNotMatch(error.message, /s3cret|Evil/);
      assert.match(error.message, /Authorization/);
      return true;
    },
  );
});

const CHUNKED_ANSWER = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" +
  "Transfer-Encoding: chunked\r\n\r\n" +
  'f;name=value\r\ndata: {"a":1}\n\n\r\n' + "3\r\nxyz\r\n" + "0\r\nX-Trailer: t\r\n\r\n";

Deno.test("a chunked body reads the same in one piece or a byte at a time, and its connection is kept", async () => {
  for (const pieces of ["whole", "bytes"] as const) {
    const server = rawServer(async (conn) => {
      for (let request = "first"; request !== ""; request = await readRequest(conn)) {
        if (pieces === "whole") await write(conn, CHUNKED_ANSWER);
        else {
          for (const byte of CHUNKED_ANSWER) {
            await write(conn, byte);
            await new Promise((resolve) => setTimeout(resolve, 0));
          }
        }
      }
    });
    const fetch1 = createHttp1Fetch();
    try {
      for (let i = 0; i < 2; i++) {
        const response = await fetch1(server.url, POST);
        assert.equal(await response.text(), 'data: {"a":1}\n\nxyz', pieces);
      }
      assert.equal(server.connections, 1, pieces);
    } finally {
      fetch1.close();
      await server.close();
    }
  }
});

Deno.test("a chunk line past the cap is refused, in the buffer already or still arriving", async () => {
  const long = `5;${"x".repeat(9_000)}\r\nhello\r\n0\r\n\r\n`;
  for (const arrives of ["with the head", "later"] as const) {
    const server = rawServer(async (conn) => {
      const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
      if (arrives === "with the head") await write(conn, head + long);
      else {
        await write(conn, head);
        await new Promise((resolve) => setTimeout(resolve, 20));
        await write(conn, long);
      }
    });
    const fetch1 = createHttp1Fetch();
    try {
      const response = await fetch1(server.url, POST);
      await assert.rejects(response.text(), (error) => {
        assert.ok(error instanceof TypeError, arrives);
        assert.match(error.message, /a chunk line is too long/, arrives);
        return true;
      });
    } finally {
      fetch1.close();
      await server.close();
    }
  }
});

Deno.test("a malformed chunked body is refused in plain words, however whole it arrived", async () => {
  const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const cases = [
    { body: "zz\r\nhello\r\n0\r\n\r\n", error: /a chunk size is invalid/ },
    { body: "3\r\nhello\r\n0\r\n\r\n", error: /a chunk is longer than its size/ },
    { body: "5\r\nhello\r\n0\r\n", error: /closed before the answer ended/ },
  ];
  for (const { body, error } of cases) {
    const server = rawServer(async (conn) => {
      await write(conn, head + body);
    });
    const fetch1 = createHttp1Fetch();
    try {
      const response = await fetch1(server.url, POST);
      await assert.rejects(response.text(), (thrown) => {
        assert.ok(thrown instanceof TypeError, body);
        assert.match(thrown.message, error, body);
        return true;
      });
    } finally {
      fetch1.close();
      await server.close();
    }
  }
});
