// `notifications/cancelled` landing on another replica than its call's (issue 40, point 4): two
// servers on one PostgreSQL database, serving the same origins as behind a balancer. The call runs
// on A; its cancel reaches B, which is not running it: it goes through the store, A ends the
// call, tells the upstream, and the audit says the agent cancelled it. A cancel published before
// a call with the same id started does not end that later call.
import assert from "node:assert/strict";
import { openPgStore } from "../../../src/store/pg_store.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { startGatewayServer, startHostileUpstream, until } from "../support/gateway_support.ts";
import { createTestApp } from "../support/harness.ts";
import { PROTOCOL_VERSION } from "../support/workspace_support.ts";

const OBJECT = { type: "object", properties: {} };

Deno.test("a cancel that lands on another replica ends the call on the one running it", async () => {
  const cluster = await startPgCluster();
  const url = await cluster.database();
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
  const a = await startGatewayServer(
    [{ name: "slow", title: "Slow", url: upstream.url, timeoutSeconds: 30 }],
    {},
    { dataUrl: url },
  );
  const { config } = a.server;
  // The same deployment: the same origins and upstreams file, its own pool to the database.
  const b = await createTestApp({
    VESTIBULE_BASE_URL: config.baseUrl,
    VESTIBULE_AUTH_URL: config.authUrl,
    VESTIBULE_API_URL: config.apiUrl,
    VESTIBULE_UPSTREAMS: config.upstreamsFile!,
  }, { store: await openPgStore({ url, poolSize: 4 }) });
  try {
    const { token } = await a.token(["app.access", "upstream.slow"]);
    const headers = {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL_VERSION,
      Authorization: `Bearer ${token}`,
    };
    const call = (id: number) =>
      a.post(token, {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "slow__wait", arguments: {} },
      });
    const cancelOnB = async (id: number) => {
      const response = await b.handler(
        new Request(`${config.apiUrl}/api/mcp`, {
          method: "POST",
          // Handed to B's handler as its listener would, with the Host the balancer passes on.
          headers: { ...headers, Host: new URL(config.apiUrl).host },
          body: JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: "changed my mind" },
          }),
        }),
        { clientAddress: "127.0.0.1" },
      );
      await response.body?.cancel();
      return response.status;
    };
    await until(
      "slow__wait to be listed",
      async () => (await a.toolNames(token)).includes("slow__wait"),
    );

    // A cancel of id 8 before any call 8 runs: it must not end the call 8 that comes later.
    assert.equal(await cancelOnB(8), 202);

    const answer = call(7);
    await called.promise;
    assert.equal(await cancelOnB(7), 202);
    const told = await until(
      "the upstream to be told the call was cancelled",
      () => upstream.notifications.find((n) => n.method === "notifications/cancelled"),
    );
    assert.equal(told.params.reason, "The call to Slow was cancelled");
    await (await answer).body?.cancel();
    const entry = await until(
      "the cancelled call's audit entry",
      async () => (await a.audit()).find((e) => e.action === "slow__wait"),
    );
    assert.match(entry.summary, /was cancelled by the agent \(cancelled\)/);

    // Call 8 runs past a poll of the store and answers: the older cancel of id 8 did not count.
    release.resolve();
    release = Promise.withResolvers();
    called = Promise.withResolvers();
    const later = call(8);
    await called.promise;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    release.resolve();
    const answered = await later;
    const body = await answered.text();
    assert.equal(answered.status, 200);
    assert.match(body, /"text":"done"/);
  } finally {
    release.resolve();
    await b.close();
    await a.close();
    await upstream.close();
    await cluster.stop();
  }
});
