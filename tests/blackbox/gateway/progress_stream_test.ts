// Progress from an upstream that answers with event streams reaches the agent as it comes:
// the upstream holds its answer until the agent has seen its progress, so a gateway that
// waited for the whole upstream stream before passing anything on would never answer (the
// call would end as a timeout). What the event-stream path costs is measured by
// `deno task bench gateway`, not here.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL } from "../../../testkit/tiny_upstream_tools.ts";
import { callWithProgress, sseMessages, startGatewayServer } from "../support/gateway_support.ts";

Deno.test("an event-stream upstream's progress reaches the agent before the upstream answers", async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const upstream = startTinyUpstream({
    answer: "sse",
    tools: [ADD_TOOL, {
      definition: { name: "slow", inputSchema: { type: "object" } },
      async handler(_args, context) {
        context.progress(1, 2, "halfway");
        await released;
        return { content: [{ type: "text", text: "done" }] };
      },
    }],
  });
  const ws = await startGatewayServer([{ name: "tiny", url: upstream.url, timeoutSeconds: 30 }]);
  try {
    const { token } = await ws.token(["app.access", "upstream.tiny"]);
    assert.ok((await ws.toolNames(token)).includes("tiny__slow"));
    const response = await ws.post(token, callWithProgress(7, "tiny__slow", {}));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Content-Type"), "text/event-stream");
    const seen: string[] = [];
    for await (const message of sseMessages(response)) {
      if (message.method === "notifications/progress") {
        assert.equal(message.params.progress, 1);
        assert.equal(message.params.message, "halfway");
        seen.push("progress");
        release();
      } else {
        assert.deepEqual(message.result?.content, [{ type: "text", text: "done" }]);
        seen.push("answer");
      }
    }
    assert.deepEqual(seen, ["progress", "answer"]);
  } finally {
    release();
    await ws.close();
    await upstream.close();
  }
});

Deno.test("the upstream is asked for progress only when the agent asked for it", async () => {
  const upstream = startTinyUpstream({ answer: "sse" });
  const ws = await startGatewayServer([{ name: "tiny", url: upstream.url }]);
  try {
    const { token } = await ws.token(["app.access", "upstream.tiny"]);
    const plain = await ws.post(token, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "tiny__add", arguments: { a: 1, b: 2 } },
    });
    assert.equal(plain.headers.get("Content-Type"), "application/json");
    assert.deepEqual((await plain.json()).result.structuredContent, { sum: 3 });
    assert.equal(upstream.lastCall?.meta?.["progressToken"], undefined);

    const asked = await ws.post(token, callWithProgress(2, "tiny__add", { a: 2, b: 2 }));
    assert.match(await asked.text(), /"sum":4/);
    assert.notEqual(upstream.lastCall?.meta?.["progressToken"], undefined);
    assert.equal(upstream.calls, 2);
  } finally {
    await ws.close();
    await upstream.close();
  }
});
