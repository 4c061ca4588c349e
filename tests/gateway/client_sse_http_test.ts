// The upstream client against an upstream that answers with event streams, through the
// gateway's own keep-alive client (src/gateway/http1.ts): progress reaches the caller while the
// upstream is still working, and the stream's connection carries the next call once it ended.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { createHttp1Fetch } from "../../src/gateway/http1.ts";
import { encodeSseEvent } from "../../src/mcp/sse.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";

const SSE = { "Content-Type": "text/event-stream" };

/**
 * A legacy server answering every request with an event stream; a tools/call's stream first
 * carries a progress notification, then waits for `release` before the answer. It records the
 * client port each tools/call came from.
 */
function serve(release: Promise<void>) {
  const callPorts: number[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request, info) => {
      if (request.method === "DELETE") return new Response(null, { status: 200 });
      const body = await request.json();
      if (body.id === undefined) return new Response(null, { status: 202 });
      const answer = (result: unknown) =>
        encodeSseEvent(JSON.stringify({ jsonrpc: "2.0", id: body.id, result }));
      if (body.method === "initialize") {
        return new Response(
          answer({
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "sse", version: "0" },
          }),
          { headers: { ...SSE, "Mcp-Session-Id": "s-1" } },
        );
      }
      if (body.method !== "tools/call") {
        return Response.json({
          jsonrpc: "2.0",
          id: body.id,
          error: { code: -32601, message: "Method not found" },
        }, { status: body.method === "server/discover" ? 404 : 200 });
      }
      callPorts.push(info.remoteAddr.port);
      const token = body.params?._meta?.progressToken;
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          if (token !== undefined) {
            const progress = { progressToken: token, progress: 1, total: 2 };
            controller.enqueue(encoder.encode(encodeSseEvent(JSON.stringify({
              jsonrpc: "2.0",
              method: "notifications/progress",
              params: progress,
            }))));
            await release;
          }
          controller.enqueue(encoder.encode(answer({ content: [{ type: "text", text: "ok" }] })));
          controller.close();
        },
      });
      return new Response(stream, { headers: SSE });
    },
  );
  return { server, callPorts, url: `http://127.0.0.1:${server.addr.port}/mcp` };
}

function client(url: string) {
  const fetch = createHttp1Fetch();
  const upstream = upstreamConfig({ kind: "http", url, headers: {} }, { timeoutMs: 10_000 });
  return { fetch, client: createMcpClient(upstream, { log: () => {}, fetch }) };
}

Deno.test("progress on an event stream reaches the caller before the upstream answers", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const { server, url } = serve(released);
  const { fetch, client: upstream } = client(url);
  const seen: string[] = [];
  try {
    const result = await upstream.callTool("slow", {}, {
      onProgress: (progress, total) => {
        seen.push(`progress ${progress}/${total}`);
        // The upstream answers only once the caller has seen its progress: a client that
        // waited for the whole stream would wait for ever (here: the call's timeout).
        release();
      },
    });
    seen.push("answer");
    assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
    assert.deepEqual(seen, ["progress 1/2", "answer"]);
  } finally {
    await upstream.close();
    fetch.close();
    await server.shutdown();
  }
});

Deno.test("an event-stream answer's connection carries the next call once the stream ended", async () => {
  const { server, callPorts, url } = serve(Promise.resolve());
  const { fetch, client: upstream } = client(url);
  try {
    for (let i = 0; i < 3; i++) {
      const result = await upstream.callTool("quick", {});
      assert.deepEqual(result.content, [{ type: "text", text: "ok" }]);
      // The rest of the stream is read after the answer, without holding the answer up.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(callPorts.length, 3);
    assert.equal(new Set(callPorts).size, 1, `calls came on ports ${callPorts.join(", ")}`);
  } finally {
    await upstream.close();
    fetch.close();
    await server.shutdown();
  }
});
