// Tracing on and off, and the collector: what `deno task start` exports with only VESTIBULE_OTEL
// and the standard OTEL_* variables, both OTLP protocols, the headers file, and a collector that
// refuses connections or never answers.
import assert from "node:assert/strict";
import { denoOnly } from "../support/server_runtime.ts";
import { startTestServer } from "../support/harness.ts";
import { until } from "../support/gateway_support.ts";
import {
  mainCommand,
  originsEnv,
  ROOT,
  startServerProcess,
  startTaskFlags,
  startup,
} from "../support/main_process.ts";
import { startOtlpReceiver } from "../support/otlp_receiver.ts";
import { npmStartCommand } from "../support/node_runtime.ts";
import { nodeBinary } from "../../../testkit/node_binary.ts";
import { modernRequest, rpc } from "../support/mcp_helpers.ts";

const AGENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const AGENT_SPAN = "b7ad6b7169203331";
const TRACEPARENT = `00-${AGENT_TRACE}-${AGENT_SPAN}-01`;

Deno.test("`deno task start` with VESTIBULE_OTEL=on and OTEL_* alone exports a server span continuing the caller's traceparent", async () => {
  const receiver = startOtlpReceiver();
  const origins = originsEnv();
  const env = {
    ...origins,
    VESTIBULE_DATA: ":memory:",
    VESTIBULE_OTEL: "on",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: "vestibule-test",
    OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
  };
  const server = await startServerProcess(new URL(".", ROOT).pathname, env);
  try {
    const response = await fetch(`${origins.VESTIBULE_BASE_URL}/health`, {
      headers: { traceparent: TRACEPARENT },
    });
    await response.body?.cancel();
    // Spans leave in batches every 2 s; the interface promises them within 15 s.
    const span = await until(
      "the request's server span",
      () => receiver.spans.find((s) => s.attributes["url.path"] === "/health"),
      15_000,
    );
    assert.equal(span.traceId, AGENT_TRACE);
    assert.equal(span.parentSpanId, AGENT_SPAN, "continued as the parent, not a new root");
    assert.equal(span.kind, 2, "SERVER");
    assert.equal(span.name, "GET /health");
    assert.equal(span.attributes["http.response.status_code"], 200);
    assert.equal(span.resource["service.name"], "vestibule-test");
    assert.equal(span.resource["deployment.environment"], "test");
    assert.deepEqual([...receiver.contentTypes], ["application/x-protobuf"]);
  } finally {
    const { code, stdout } = await server.stop();
    await receiver.close();
    assert.equal(code, 0);
    const line = stdout.split("\n").find((l) => l.includes('"path":"/health"'));
    assert.match(line ?? "", new RegExp(`"trace_id":"${AGENT_TRACE}","span_id":"[0-9a-f]{16}"`));
  }
});

const node = nodeBinary();

Deno.test({
  name: "`npm start` on Node.js with VESTIBULE_OTEL=on and OTEL_* alone exports the same spans",
  ignore: node === null,
  async fn() {
    const receiver = startOtlpReceiver();
    const origins = originsEnv();
    const env = {
      NO_COLOR: "1",
      ...origins,
      VESTIBULE_DATA: ":memory:",
      VESTIBULE_OTEL: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    };
    const command = await npmStartCommand(node!, env);
    const server = await startServerProcess(ROOT.pathname, env, command);
    try {
      const response = await fetch(`${origins.VESTIBULE_BASE_URL}/health`, {
        headers: { traceparent: TRACEPARENT },
      });
      await response.body?.cancel();
      const span = await until(
        "the request's server span",
        () => receiver.spans.find((s) => s.name === "GET /health"),
        15_000,
      );
      assert.equal(span.traceId, AGENT_TRACE);
      assert.equal(span.parentSpanId, AGENT_SPAN);
    } finally {
      const { code, stderr } = await server.stop();
      await receiver.close();
      assert.equal(code, 0, stderr);
    }
  },
});

Deno.test("tracing exports over http/json too, with the headers file's headers on every export", async () => {
  const receiver = startOtlpReceiver();
  const headersFile = await Deno.makeTempFile();
  await Deno.chmod(headersFile, 0o600);
  await Deno.writeTextFile(headersFile, "x-collector-key=k3y-from-file\n");
  const server = await startTestServer({
    VESTIBULE_OTEL: "on",
    VESTIBULE_OTEL_HEADERS_FILE: headersFile,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_HEADERS: "x-tenant=acme",
  });
  try {
    await (await fetch(`${server.baseUrl}/health`)).body?.cancel();
  } finally {
    await server.close(); // exports what is pending
    await receiver.close();
    await Deno.remove(headersFile);
  }
  assert.deepEqual([...receiver.contentTypes], ["application/json"]);
  const span = receiver.spans.find((s) => s.name === "GET /health");
  assert.ok(span, "the request's span");
  assert.equal(span.parentSpanId, "", "no caller's traceparent: a root");
  assert.ok(receiver.headers.every((h) => h.get("x-collector-key") === "k3y-from-file"));
  assert.ok(receiver.headers.every((h) => h.get("x-tenant") === "acme"));
});

Deno.test("a 2026-07-28 request's _meta traceparent is the parent of its MCP span, and its errors are marked", async () => {
  const receiver = startOtlpReceiver();
  const server = await startTestServer({
    VESTIBULE_OTEL: "on",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });
  const metaSpan = "53995c3f42cd8ad8";
  try {
    const list = modernRequest("tools/list", {}, "list-1");
    (list.body.params as Record<string, unknown>)["_meta"] = {
      ...(list.body.params as Record<string, Record<string, unknown>>)["_meta"],
      traceparent: `00-${AGENT_TRACE}-${metaSpan}-01`,
    };
    const listed = await rpc(`${server.authUrl}/mcp`, list.body, list.headers);
    assert.ok(Array.isArray(listed.result?.tools));
    // A malformed one is ignored: that request's MCP span stays the child of its HTTP span.
    const odd = modernRequest("tools/list", {}, "list-2");
    (odd.body.params as Record<string, unknown>)["_meta"] = {
      ...(odd.body.params as Record<string, Record<string, unknown>>)["_meta"],
      traceparent: "00-not-a-trace-01",
    };
    await rpc(`${server.authUrl}/mcp`, odd.body, odd.headers);
    const unknown = modernRequest("tools/call", { name: "no_such_tool", arguments: {} }, 2);
    await (await fetch(`${server.authUrl}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        ...unknown.headers,
      },
      body: JSON.stringify(unknown.body),
    })).body?.cancel();
  } finally {
    await server.close();
    await receiver.close();
  }
  const list = receiver.spans.find((s) => s.attributes["jsonrpc.request.id"] === "list-1");
  assert.ok(list, receiver.spans.map((s) => s.name).join(", "));
  assert.equal(list.traceId, AGENT_TRACE);
  assert.equal(list.parentSpanId, metaSpan, "_meta's context is the parent");
  assert.equal(list.name, "tools/list");
  const odd = receiver.spans.find((s) => s.attributes["jsonrpc.request.id"] === "list-2");
  assert.equal(
    receiver.spans.find((s) => s.spanId === odd?.parentSpanId)?.name,
    "POST /mcp",
    "a malformed _meta traceparent leaves the HTTP span the parent",
  );
  assert.equal(list.attributes["mcp.protocol.version"], "2026-07-28");
  const failed = receiver.spans.find((s) => s.name === "tools/call no_such_tool");
  assert.ok(failed, receiver.spans.map((s) => s.name).join(", "));
  assert.match(String(failed.attributes["error.type"]), /^-32\d{3}$/);
  assert.equal(failed.attributes["rpc.response.status_code"], failed.attributes["error.type"]);
  assert.equal(failed.statusCode, 2, "ERROR");
});

Deno.test("tracing off: no span, no trace ids on log lines", async () => {
  const receiver = startOtlpReceiver();
  const server = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  try {
    await (await fetch(`${server.baseUrl}/health`, { headers: { traceparent: TRACEPARENT } }))
      .body?.cancel();
  } finally {
    await server.close();
    await receiver.close();
  }
  assert.equal(receiver.raw.length, 0);
  assert.ok(!server.logs.some((line) => line.includes("trace_id")));
});

/** A collector that accepts connections and never answers. */
function silentCollector(): { url: string; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) held.push(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${listener.addr.port}`,
    close() {
      for (const conn of held) conn.close();
      listener.close();
    },
  };
}

Deno.test("a collector that refuses connections or never answers: requests are answered as before, one line says spans are dropped", async (t) => {
  const refusing = startOtlpReceiver();
  const refusedUrl = refusing.url;
  await refusing.close();
  const silent = silentCollector();
  const collectors: [string, string][] = [["refuses", refusedUrl], ["never answers", silent.url]];
  for (const [name, url] of collectors) {
    await t.step(name, async () => {
      const server = await startTestServer({
        VESTIBULE_OTEL: "on",
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
      });
      try {
        // Requests go on being answered while exports fail or hang.
        for (let i = 0; i < 20; i++) {
          const response = await fetch(`${server.baseUrl}/health`);
          assert.equal(response.status, 200);
          await response.body?.cancel();
        }
        const dropped = () =>
          server.logs.filter((line) =>
            line.includes("spans are dropped until the collector answers")
          );
        await until("the line saying spans are dropped", () => dropped().length > 0, 40_000);
        for (let i = 0; i < 5; i++) {
          await (await fetch(`${server.baseUrl}/health`)).body?.cancel();
        }
        assert.equal(dropped().length, 1, "one line, not one per batch");
        assert.equal(JSON.parse(dropped()[0]!).level, "warn");
      } finally {
        await server.close();
      }
    });
  }
  silent.close();
});

Deno.test(
  "started with an older --allow-env that does not let OTEL_* be read: fine with tracing off, one line with it on",
  {
    ignore: denoOnly("about Deno's --allow-env: Node.js does not restrict reading the environment"),
  },
  async () => {
    const flags = (await startTaskFlags()).map((flag) =>
      flag.startsWith("--allow-env=") ? "--allow-env=VESTIBULE_*,PGAPPNAME" : flag
    );
    const env = { ...originsEnv(), VESTIBULE_DATA: ":memory:" };
    const server = await startServerProcess(
      ROOT.pathname,
      env,
      mainCommand(flags, env, { cwd: ROOT }),
    );
    const { code } = await server.stop();
    assert.equal(code, 0);
    const on = await startup(
      mainCommand(flags, { ...originsEnv(), VESTIBULE_DATA: ":memory:", VESTIBULE_OTEL: "on" }, {
        cwd: ROOT,
      }),
    );
    assert.equal(on.code, 2);
    assert.match(on.stderr, /OTEL_EXPORTER_OTLP_ENDPOINT cannot be read: the process may not read/);
  },
);
