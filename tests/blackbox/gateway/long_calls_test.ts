// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the test picks apart
// A forwarded call may take as long as its upstream's timeout, even past VESTIBULE_READ_TIMEOUT
// (which closes a request not answered in time): one still running after half of it is answered
// as an event stream, whose answer comes when the upstream's does. And the audit says who ended a
// call: the agent, the upstream's timeout, or Vestibule itself (here, shutting down).
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import {
  type GatewayServer,
  sseMessages,
  startGatewayServer,
  startHostileUpstream,
  until,
} from "../support/gateway_support.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

const OBJECT = { type: "object", properties: {} };

/** An upstream whose one tool answers only when the test releases it. */
function slowUpstream() {
  let release = Promise.withResolvers<void>();
  let called = Promise.withResolvers<void>();
  const upstream = startHostileUpstream([{ name: "wait", inputSchema: OBJECT }], async (id) => {
    called.resolve();
    await release.promise;
    return Response.json({
      jsonrpc: "2.0",
      id,
      result: { content: [{ type: "text", text: "done" }] },
    });
  });
  return {
    upstream,
    /** Resolves once a call has reached it. */
    called: () => called.promise,
    release() {
      release.resolve();
      release = Promise.withResolvers();
      called = Promise.withResolvers();
    },
  };
}

async function callWait(ws: GatewayServer, token: string): Promise<Response> {
  await until(
    "slow__wait to be listed",
    async () => (await ws.toolNames(token)).includes("slow__wait"),
  );
  return await ws.post(token, {
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "slow__wait", arguments: {} },
  });
}

Deno.test("a call that outlasts VESTIBULE_READ_TIMEOUT within its upstream's timeout is answered, as an event stream", async () => {
  const slow = slowUpstream();
  const ws = await startGatewayServer(
    [{ name: "slow", title: "Slow", url: slow.upstream.url, timeoutSeconds: 30 }],
    { VESTIBULE_READ_TIMEOUT: "1" },
  );
  try {
    const { token } = await ws.token(["app.access", "upstream.slow"]);
    const response = await callWait(ws, token);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("Content-Type"), "text/event-stream");
    // Past the read timeout (and the sweep that enforces it) before the upstream answers.
    await slow.called();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    slow.release();
    const messages: any[] = [];
    for await (const message of sseMessages(response)) messages.push(message);
    assert.deepEqual(messages, [
      { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "done" }] } },
    ]);
    const entry = await until(
      "the call's audit entry",
      async () => (await ws.audit()).find((entry) => entry.action === "slow__wait"),
    );
    assert.match(entry.summary, /: answered \(ok\) in \d+ ms;/);
    assert.deepEqual(
      slow.upstream.notifications.filter((n) => n.method === "notifications/cancelled"),
      [],
      "the upstream was not told to cancel",
    );
  } finally {
    slow.release();
    await ws.close();
    await slow.upstream.close();
  }
});

Deno.test(
  "a call still running when shutdown's grace ends is audited as ended by Vestibule, and the upstream told why",
  async () => {
    const slow = slowUpstream();
    const dir = await Deno.makeTempDir();
    const dataUrl = storeFile(`${dir}/store`);
    const ws = await startGatewayServer(
      [{ name: "slow", title: "Slow", url: slow.upstream.url, timeoutSeconds: 30 }],
      { VESTIBULE_READ_TIMEOUT: "3600", VESTIBULE_SHUTDOWN_GRACE: "0.1" },
      { dataUrl },
    );
    try {
      const { token } = await ws.token(["app.access", "upstream.slow"]);
      // The agent hears nothing more: its connection is closed.
      const answer = callWait(ws, token).then((response) => response.body?.cancel(), () => {});
      await slow.called();
      await ws.close();
      await answer;
      const reopened = await openStoreFile(dataUrl);
      try {
        const entries = await createAuditLog(reopened, Date.now).list(ws.businessId);
        const entry = entries.find((entry) => entry.action === "slow__wait");
        assert.match(
          entry?.summary ?? "",
          /^Called wait of Slow: was ended by Vestibule, not the agent \(shutting down, or a deadline of its own\) \(ended\) in \d+ ms;/,
        );
      } finally {
        await reopened.close();
      }
      await until(
        "the upstream to be told",
        () => slow.upstream.notifications.some((n) => n.method === "notifications/cancelled"),
      );
      const cancelled = slow.upstream.notifications.filter((n) =>
        n.method === "notifications/cancelled"
      );
      assert.deepEqual(cancelled.map((n) => [n.method, n.params.reason]), [
        [
          "notifications/cancelled",
          "The call to Slow was ended by Vestibule: the server is shutting down",
        ],
      ]);
    } finally {
      slow.release();
      await slow.upstream.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
