// The gateway's own HTTP/1.1 client against real servers on loopback (Deno.serve, and raw
// listeners that frame answers as a test needs): connections, their reuse and their caps, aborts,
// https, and the MCP client through it. How answers are framed: http1_framing_test.ts.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { createHttp1Fetch } from "../../src/gateway/http1.ts";
import { unreachable } from "../../src/gateway/http_session.ts";
import { UpstreamError } from "../../src/gateway/mcp_client.ts";
import { startTinyUpstream } from "../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../testkit/tiny_upstream_tools.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";
import { settledWithin } from "../blackbox/support/gateway_support.ts";
import { selfSignedCertificate } from "../blackbox/support/smtp_server.ts";
import { POST, rawServer, readRequest, write } from "./http1_raw_server.ts";

Deno.test("a Content-Length answer comes back with its status, headers and body", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) =>
      Response.json({ got: await request.text(), host: request.headers.get("Host") }, {
        status: 201,
        headers: { "Mcp-Session-Id": "s-1" },
      }),
  );
  const fetch1 = createHttp1Fetch();
  try {
    const response = await fetch1(`http://127.0.0.1:${server.addr.port}/mcp?x=1`, {
      method: "POST",
      headers: new Headers({ "Content-Type": "application/json" }),
      body: '{"é":1}',
    });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("mcp-session-id"), "s-1");
    assert.equal(response.headers.get("Content-Type"), "application/json");
    assert.deepEqual(await response.json(), {
      got: '{"é":1}',
      host: `127.0.0.1:${server.addr.port}`,
    });
  } finally {
    fetch1.close();
    await server.shutdown();
  }
});

Deno.test("fifty sequential requests share one kept-alive connection", async () => {
  const ports = new Set<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (_request, info) => {
      ports.add(info.remoteAddr.port);
      return new Response("ok");
    },
  );
  const fetch1 = createHttp1Fetch();
  try {
    for (let i = 0; i < 50; i++) {
      const response = await fetch1(`http://127.0.0.1:${server.addr.port}/`, POST);
      assert.equal(await response.text(), "ok");
    }
    assert.equal(ports.size, 1);
  } finally {
    fetch1.close();
    await server.shutdown();
  }
});

Deno.test("an idempotent request on a connection the server closed is sent again on a new one", async () => {
  const { promise: closedFirst, resolve: firstClosed } = Promise.withResolvers<void>();
  let answered = 0;
  const server = rawServer(async (conn) => {
    await write(conn, `HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n${++answered}`);
    // Keep-alive was promised; the server closes anyway, as an idle timeout would.
    conn.close();
    firstClosed();
  });
  const fetch1 = createHttp1Fetch();
  try {
    assert.equal(await (await fetch1(server.url, POST)).text(), "1");
    await closedFirst;
    // Whether the client saw the close while idle or only on its write, this one is answered.
    assert.equal(await (await fetch1(server.url, { ...POST, idempotent: true })).text(), "2");
    assert.equal(server.connections, 2);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a POST that failed on a reused connection is never sent again", async () => {
  let received = 0;
  const server = rawServer(async (conn) => {
    await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    await readRequest(conn);
    // The server acts on the second request, then drops the connection without a byte.
    received++;
    conn.close();
  });
  const fetch1 = createHttp1Fetch();
  try {
    assert.equal(await (await fetch1(server.url, POST)).text(), "ok");
    await assert.rejects(fetch1(server.url, POST), (error) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, /closed before the answer began/);
      return true;
    });
    assert.equal(received, 1);
    assert.equal(server.connections, 1);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("bytes a server writes after a complete answer close the idle connection", async () => {
  const { promise: extra, resolve: sendExtra } = Promise.withResolvers<void>();
  const { promise: firstGone, resolve: sawFirstGo } = Promise.withResolvers<void>();
  const server = rawServer(async (conn) => {
    const first = server.connections === 1;
    await write(conn, `HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n${first ? "alice" : "bob.."}`);
    if (!first) {
      for (let request = "next"; request !== ""; request = await readRequest(conn)) {
        await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nbob..");
      }
      return;
    }
    await extra;
    // A whole answer more, after the client has read the first: it must never be the next one.
    await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nALICE");
    // Whatever comes now (the client's close, or a request) is never answered here.
    await conn.read(new Uint8Array(1)).catch(() => null);
    sawFirstGo();
  });
  const fetch1 = createHttp1Fetch();
  try {
    assert.equal(await (await fetch1(server.url, POST)).text(), "alice");
    sendExtra();
    // The client closes the connection once it sees the bytes (a client that did not would
    // reuse it: the wait is bounded, well under the idle timeout).
    await settledWithin(firstGone, 1_000);
    assert.equal(await (await fetch1(server.url, POST)).text(), "bob..");
    assert.equal(server.connections, 2);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("an origin gets at most maxPerOrigin connections; the other requests wait their turn", async () => {
  const server = rawServer(async (conn) => {
    for (let request = "first"; request !== ""; request = await readRequest(conn)) {
      await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  const fetch1 = createHttp1Fetch({ maxPerOrigin: 2 });
  try {
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => await (await fetch1(server.url, POST)).text()),
    );
    assert.deepEqual(answers, ["ok", "ok", "ok", "ok", "ok"]);
    assert.equal(server.connections, 2);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a request waiting for a connection ends with its signal, and sends nothing", async () => {
  const { promise: release, resolve: answer } = Promise.withResolvers<void>();
  let requests = 0;
  const server = rawServer(async (conn) => {
    for (let request = "first"; request !== ""; request = await readRequest(conn)) {
      requests++;
      await release;
      await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  const fetch1 = createHttp1Fetch({ maxPerOrigin: 1 });
  try {
    const first = fetch1(server.url, POST);
    const controller = new AbortController();
    const waiting = fetch1(server.url, { ...POST, signal: controller.signal });
    const reason = new Error("gave up waiting");
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    answer();
    assert.equal(await (await first).text(), "ok");
    assert.equal(await (await fetch1(server.url, POST)).text(), "ok");
    assert.equal(requests, 2);
    assert.equal(server.connections, 1);
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("requests of different pools never share a connection, and share the origin's cap", async () => {
  const seen: string[] = [];
  const server = rawServer(async (conn) => {
    const index = server.connections;
    for (let request = "first"; request !== ""; request = await readRequest(conn)) {
      seen.push(`${index}`);
      await write(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    }
  });
  const shared = createHttp1Fetch();
  const capped = createHttp1Fetch({ maxPerOrigin: 1 });
  try {
    for (const pool of ["alice", "bob", "alice", "bob"]) {
      assert.equal(await (await shared(server.url, { ...POST, pool })).text(), "ok");
    }
    assert.deepEqual(seen, ["1", "2", "1", "2"]);
    // With room for one: bob's request closes alice's idle connection and opens its own.
    for (const pool of ["alice", "bob"]) {
      assert.equal(await (await capped(server.url, { ...POST, pool })).text(), "ok");
    }
    assert.equal(server.connections, 4);
  } finally {
    shared.close();
    capped.close();
    await server.close();
  }
});

Deno.test("an abort while the body streams errors the stream and closes the connection", async () => {
  const { promise: clientGone, resolve: sawClientGo } = Promise.withResolvers<string>();
  const server = rawServer(async (conn) => {
    await write(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n");
    try {
      sawClientGo((await conn.read(new Uint8Array(16))) === null ? "closed" : "sent bytes");
    } catch {
      sawClientGo("closed");
    }
  });
  const fetch1 = createHttp1Fetch();
  try {
    const controller = new AbortController();
    const response = await fetch1(server.url, { ...POST, signal: controller.signal });
    const reader = response.body!.getReader();
    assert.equal((await reader.read()).value?.byteLength, 3);
    const pending = reader.read();
    const reason = new Error("caller gave up");
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(await clientGone, "closed");
  } finally {
    fetch1.close();
    await server.close();
  }
});

Deno.test("a signal aborted before the request rejects with its reason and sends nothing", async () => {
  const fetch1 = createHttp1Fetch();
  const reason = new Error("already gone");
  await assert.rejects(
    fetch1("http://127.0.0.1:9/", { ...POST, signal: AbortSignal.abort(reason) }),
    (error) => error === reason,
  );
});

Deno.test("a refused connection is a TypeError the transport reads as refused", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${listener.addr.port}/mcp`;
  listener.close();
  const fetch1 = createHttp1Fetch();
  const error = await fetch1(url, POST).then(() => null, (error) => error);
  assert.ok(error instanceof TypeError);
  assert.ok(error.cause instanceof Deno.errors.ConnectionRefused);
  assert.equal(
    unreachable("Tiny", error).message,
    "Tiny is unreachable: the connection was refused",
  );
});

Deno.test("https trusts the given CA, and refuses a certificate no CA vouches for", async () => {
  const { key, cert } = await selfSignedCertificate({ leaf: true });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    () => new Response("secure"),
  );
  const url = `https://localhost:${server.addr.port}/`;
  const trusting = createHttp1Fetch({ caCerts: [cert] });
  const plain = createHttp1Fetch();
  try {
    assert.equal(await (await trusting(url, POST)).text(), "secure");
    assert.equal(await (await trusting(url, POST)).text(), "secure");
    await assert.rejects(plain(url, POST), TypeError);
  } finally {
    trusting.close();
    plain.close();
    await server.shutdown();
  }
});

const PROGRESSING: TinyTool = {
  definition: { name: "slow", inputSchema: { type: "object" } },
  handler(_args, context) {
    context.progress(1, 2);
    context.progress(2, 2);
    return { content: [{ type: "text", text: "done" }] };
  },
};

for (const answer of ["sse", "json"] as const) {
  Deno.test(`the MCP client works through it against ${answer} answers`, async () => {
    const upstream = startTinyUpstream({ answer, tools: [ADD_TOOL, PROGRESSING] });
    const fetch1 = createHttp1Fetch();
    const client = createMcpClient(
      upstreamConfig({ kind: "http", url: upstream.url, headers: { "X-Operator": "op" } }, {
        name: "tiny",
        title: "Tiny",
      }),
      { fetch: fetch1, log: () => {} },
    );
    try {
      const tools = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name), ["add", "slow"]);
      const sum = await client.callTool("add", { a: 2, b: 3 });
      assert.deepEqual(sum["structuredContent"], { sum: 5 });
      assert.equal(upstream.lastCall?.headers.get("X-Operator"), "op");
      const seen: string[] = [];
      const result = await client.callTool("slow", {}, {
        onProgress: (progress, total) => seen.push(`${progress}/${total}`),
      });
      seen.push("result");
      assert.deepEqual(seen, answer === "sse" ? ["1/2", "2/2", "result"] : ["result"]);
      assert.deepEqual(result.content, [{ type: "text", text: "done" }]);
    } finally {
      await client.close();
      fetch1.close();
      await upstream.close();
    }
  });
}

Deno.test("a stopped upstream is unreachable through it, as through fetch", async () => {
  const upstream = startTinyUpstream();
  const fetch1 = createHttp1Fetch();
  const client = createMcpClient(
    upstreamConfig({ kind: "http", url: upstream.url, headers: {} }, { title: "Tiny" }),
    { fetch: fetch1, log: () => {} },
  );
  try {
    await client.callTool("add", { a: 1, b: 1 });
    await upstream.close();
    await assert.rejects(
      client.callTool("add", { a: 1, b: 1 }),
      (error) =>
        error instanceof UpstreamError && error.kind === "unreachable" &&
        /^Tiny is unreachable: the connection was (refused|reset)$/.test(error.message),
    );
  } finally {
    await client.close();
    fetch1.close();
  }
});

Deno.test("a request's Content-Length counts its body's bytes, ASCII or not", async () => {
  const heads: string[] = [];
  const server = rawServer(async (conn, request) => {
    heads.push(request);
    await write(conn, "HTTP/1.1 204 No Content\r\n\r\n");
  });
  const fetch1 = createHttp1Fetch();
  try {
    for (const body of ['{"a":1}', '{"name":"Zoë ☕"}', ""]) {
      await fetch1(server.url, { ...POST, body });
    }
    const sent = heads.map((request) => ({
      length: /\r\ncontent-length: (\d+)\r\n/i.exec(request)?.[1],
      body: request.slice(request.indexOf("\r\n\r\n") + 4),
    }));
    assert.deepEqual(sent, [
      { length: "7", body: '{"a":1}' },
      {
        length: String(new TextEncoder().encode('{"name":"Zoë ☕"}').byteLength),
        body: '{"name":"Zoë ☕"}',
      },
      { length: "0", body: "" },
    ]);
  } finally {
    fetch1.close();
    await server.close();
  }
});
