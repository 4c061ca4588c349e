// The upstream client carries the trace on: a CLIENT span per request, and its context in the
// request's `_meta` for a 2026-07-28 upstream over stdio (a small child of our own that answers
// with the traceparent it was sent), exported through the real SDK to a test OTLP receiver.
import assert from "node:assert/strict";
import { createMcpClient } from "../../src/gateway/client.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { openTracing } from "../../src/tracing/open.ts";
import { upstreamConfig } from "../../testkit/upstreams.ts";
import { startOtlpReceiver } from "../blackbox/support/otlp_receiver.ts";
import { stdioChildScript } from "../../testkit/stdio_child.ts";

/** A 2026-07-28 stdio server in a few lines: discover, tools, and an echo of `_meta`. */
const MODERN_CHILD = stdioChildScript(`
if (message.method === "server/discover") {
  reply({ supportedVersions: ["2026-07-28"], capabilities: { tools: {} },
    serverInfo: { name: "s", version: "0" } });
} else if (message.method === "tools/list") {
  reply({ tools: [{ name: "echo", inputSchema: { type: "object" } }] });
} else if (message.method === "tools/call") {
  reply({ content: [{ type: "text", text: String(message.params._meta?.traceparent) }] });
}
`);

Deno.test("a 2026-07-28 stdio upstream gets the client span's traceparent in _meta", async () => {
  const receiver = startOtlpReceiver();
  const script = await Deno.makeTempFile({ suffix: ".js" });
  await Deno.writeTextFile(script, MODERN_CHILD);
  const config = resolveConfig({
    VESTIBULE_OTEL: "on",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  });
  const tracing = await openTracing(config.otel, () => {});
  const client = createMcpClient(
    upstreamConfig({
      kind: "stdio",
      command: Deno.execPath(),
      args: ["run", "--no-lock", script],
      env: { NO_COLOR: "1" },
      cwd: null,
    }, { name: "script", title: "Script" }),
    { log: () => {}, tracing },
  );
  let sent = "";
  try {
    const result = await tracing.span(
      "agent request",
      { kind: "server" },
      () => client.callTool("echo", { secret: "argument-value-1618" }),
    );
    sent = (result.content as { text: string }[])[0]!.text;
  } finally {
    await client.close();
    await tracing.shutdown();
    await receiver.close();
    await Deno.remove(script);
  }
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent);
  assert.ok(match, `a traceparent in _meta: ${sent}`);
  const span = receiver.spans.find((s) => s.name === "tools/call echo");
  assert.ok(span, "the client span was exported");
  assert.equal(span.kind, 3, "CLIENT");
  assert.deepEqual([match[1], match[2]], [span.traceId, span.spanId]);
  assert.equal(span.attributes["network.transport"], "pipe");
  assert.equal(span.attributes["vestibule.upstream.name"], "script");
  assert.equal(span.attributes["mcp.protocol.version"], "2026-07-28");
  const parent = receiver.spans.find((s) => s.spanId === span.parentSpanId);
  assert.equal(parent?.name, "agent request");
  const exported = receiver.raw.map((b) => new TextDecoder().decode(b)).join("");
  assert.ok(!exported.includes("argument-value-1618"), "arguments are never exported");
});
