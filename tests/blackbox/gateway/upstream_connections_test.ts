// The gateway's connections to upstreams carry one caller's answer to that caller only, make an
// approved or direct call once, and cost a bounded number of sockets, against raw-socket
// upstreams that misbehave on purpose: bytes written after a complete answer, a call taken and
// then dropped, thousands of requests to the client on one call's stream.
import assert from "node:assert/strict";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { settledWithin, sseEvent, startGatewayServer, until } from "../support/gateway_support.ts";
import { signIn } from "../support/workspace_support.ts";
import { httpAnswer, type RawCall, startRawUpstream } from "../support/raw_upstream.ts";

const OBJECT = { type: "object", properties: {} };
const text = (value: string) => ({ content: [{ type: "text", text: value }] });

Deno.test("upstream connections: no answer crosses callers, no call twice, no flood", async (t) => {
  // Two upstreams at one origin: each has its own client, and the gateway one pool.
  let alice: RawCall | null = null;
  const shared = startRawUpstream({
    "/a": [{ name: "secret", inputSchema: OBJECT }],
    "/b": [{ name: "echo", inputSchema: OBJECT }],
  }, async (call) => {
    if (call.path === "/a") alice = call;
    await call.reply(text(call.path === "/a" ? "ALICE-SECRET" : "for bob"));
  });
  let charges = 0;
  const charging = startRawUpstream({
    "/mcp": [
      { name: "free", inputSchema: OBJECT },
      { name: "charge", inputSchema: OBJECT },
      { name: "approved-charge", inputSchema: OBJECT },
    ],
  }, async (call) => {
    if (call.name === "free") return await call.reply(text("nothing charged"));
    // The side effect happens; then the connection drops before any byte of the answer.
    charges++;
    call.drop();
  });
  const asking = startRawUpstream({ "/mcp": [{ name: "asks", inputSchema: OBJECT }] }, (call) => {
    const requests = Array.from({ length: 3_000 }, (_, i) =>
      sseEvent({
        jsonrpc: "2.0",
        id: `s-${i}`,
        method: "sampling/createMessage",
        params: { messages: [], maxTokens: 1 },
      }));
    const answer = sseEvent({ jsonrpc: "2.0", id: call.id, result: text("ok") });
    return call.write(httpAnswer(requests.join("") + answer, "text/event-stream"));
  });
  const outbox = await tempOutbox();
  let held = 0;
  const { promise: gate, resolve: openGate } = Promise.withResolvers<void>();
  const holding = startRawUpstream(
    { "/mcp": [{ name: "hold", inputSchema: OBJECT }] },
    async (call) => {
      held++;
      await gate;
      await call.reply(text("held"));
    },
  );
  const ws = await startGatewayServer([
    { name: "a", title: "A", url: shared.url("/a") },
    { name: "b", title: "B", url: shared.url("/b") },
    { name: "c", title: "Charges", url: charging.url("/mcp"), gated: ["approved-charge"] },
    { name: "s", title: "Asking", url: asking.url("/mcp") },
    { name: "h", title: "Holding", url: holding.url("/mcp") },
  ], { VESTIBULE_RATE_LIMITS: "off", VESTIBULE_MAIL: outbox.env });
  const { token } = await ws.token([
    "app.access",
    "upstream.a",
    "upstream.b",
    "upstream.c",
    "upstream.s",
    "upstream.h",
  ]);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200, JSON.stringify(message));
    return message.result;
  };
  try {
    await until("every upstream listed", async () => {
      const names = await ws.toolNames(token);
      return ["a__secret", "b__echo", "c__charge", "s__asks", "h__hold"]
        .every((n) => names.includes(n));
    });

    await t.step("bytes written after a complete answer never reach the next caller", async () => {
      assert.deepEqual(await call("a__secret"), text("ALICE-SECRET"));
      const first = alice!;
      // Once the gateway has read the whole answer, the upstream repeats it on the same
      // connection, as the answer to the same id.
      const stale = JSON.stringify({ jsonrpc: "2.0", id: first.id, result: text("ALICE-SECRET") });
      await shared.writeOn(first.connection, httpAnswer(stale));
      // The gateway closes a connection that received anything while idle.
      await settledWithin(shared.closed(first.connection), 1_000);
      const bob = await call("b__echo");
      assert.doesNotMatch(JSON.stringify(bob), /ALICE/);
      assert.deepEqual(bob, text("for bob"));
    });

    await t.step("a call the upstream took and then dropped is made once: an error", async () => {
      // A call first, so that the next one goes on a kept-alive connection.
      assert.deepEqual(await call("c__free"), text("nothing charged"));
      const opened = charging.connections;
      const result = await call("c__charge");
      assert.equal(result.isError, true, JSON.stringify(result));
      assert.match(result.content[0].text, /^Charges is unreachable/);
      assert.equal(charges, 1);
      assert.equal(charging.connections, opened);
    });

    await t.step("an approved call the upstream took and then dropped is made once", async () => {
      const owner = await signIn(ws, outbox, "owner@example.com");
      const pending = (await call("c__approved-charge")).structuredContent;
      assert.equal(pending.status, "pending", JSON.stringify(pending));
      assert.deepEqual(await call("c__free"), text("nothing charged"));
      const before = charges;
      const page = await owner.get(pending.approvalUrl);
      assert.equal(page.status, 200, page.text);
      const decided = await owner.post(pending.approvalUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      assert.equal(decided.status, 303, decided.text);
      const view = await until("the approved call's result", async () => {
        const got = (await call("get_approval", { gateId: pending.gateId })).structuredContent;
        return got.result === undefined ? undefined : got;
      });
      assert.equal(view.result.isError, true, JSON.stringify(view));
      assert.match(view.result.content[0].text, /^Charges is unreachable/);
      assert.equal(charges, before + 1);
    });

    await t.step(
      "requests to the client on a call's stream: a few refused, then an error",
      async () => {
        const result = await call("s__asks");
        assert.equal(result.isError, true, JSON.stringify(result));
        assert.match(result.content[0].text, /Asking sent more than 16 requests to the client/);
        assert.equal(asking.responses.length, 16);
        assert.ok(asking.responses.every((refusal) => refusal.error?.code === -32601));
        // The listing's connection, the call's, and one the refusals share.
        assert.ok(asking.connections <= 3, `${asking.connections} connections`);
      },
    );

    await t.step("a hundred calls at once use at most 64 connections; the rest wait", async () => {
      const calls = Array.from({ length: 100 }, () => call("h__hold"));
      await until("64 calls held at the upstream", () => held >= 64, 30_000);
      // Meanwhile another upstream answers as ever.
      assert.deepEqual(await call("b__echo"), text("for bob"));
      openGate();
      for (const result of await Promise.all(calls)) assert.deepEqual(result, text("held"));
      assert.equal(held, 100);
      assert.ok(holding.connections <= 64, `${holding.connections} connections`);
    });
  } finally {
    openGate();
    await ws.close();
    await shared.close();
    await charging.close();
    await asking.close();
    await holding.close();
  }
});
