// Who ended a forwarded call: the caller (cancelled, or gone) or the server (its connection).
import assert from "node:assert/strict";
import { CallEnded, createForwardedCalls } from "../../src/mcp/forwarded_calls.ts";
import type { JsonRpcNotification } from "../../src/mcp/messages.ts";

const CANCEL_7: JsonRpcNotification = {
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId: 7 },
};

function started(ended?: AbortController) {
  const calls = createForwardedCalls();
  const client = new AbortController();
  const request = { signal: client.signal } as Request;
  const context = { clientAddress: "192.0.2.1", ended: ended?.signal };
  return { calls, client, call: calls.start("alice", 7, request, context) };
}

function reason(signal: AbortSignal): [string, string] {
  assert.ok(signal.reason instanceof CallEnded);
  return [signal.reason.by, signal.reason.message];
}

Deno.test("a forwarded call ended by the server says so; one ended by its caller says that", async (t) => {
  await t.step("the server closes the connection", () => {
    const server = new AbortController();
    const { call } = started(server);
    server.abort("the server is shutting down");
    assert.deepEqual(reason(call.signal), ["server", "the server is shutting down"]);
  });
  await t.step("the connection closes after the server closed it", () => {
    const server = new AbortController();
    server.abort("the server is shutting down");
    const { call } = started(server);
    assert.deepEqual(reason(call.signal), ["server", "the server is shutting down"]);
  });
  await t.step("the client goes away", () => {
    const { call, client } = started(new AbortController());
    client.abort();
    assert.deepEqual(reason(call.signal), ["client", "the client went away"]);
  });
  await t.step("the client cancels it; another caller cannot", () => {
    const { call, calls } = started();
    calls.notify("mallory", CANCEL_7);
    assert.equal(call.signal.aborted, false);
    calls.notify("alice", CANCEL_7);
    assert.deepEqual(reason(call.signal), ["client", "the client cancelled it"]);
  });
  await t.step("calls one after another on one connection: only those running are ended", () => {
    const server = new AbortController();
    const calls = createForwardedCalls();
    const context = { clientAddress: "192.0.2.1", ended: server.signal };
    const call = (id: number) =>
      calls.start("alice", id, { signal: new AbortController().signal } as Request, context);
    const first = call(1);
    first.done();
    const [second, third] = [call(2), call(3)];
    server.abort("the server is shutting down");
    assert.equal(first.signal.aborted, false);
    assert.deepEqual(reason(second.signal), ["server", "the server is shutting down"]);
    assert.deepEqual(reason(third.signal), ["server", "the server is shutting down"]);
  });
  await t.step("a call that is done is no longer cancelled", () => {
    const server = new AbortController();
    const { call, calls } = started(server);
    call.done();
    server.abort("the server is shutting down");
    calls.notify("alice", CANCEL_7);
    assert.equal(call.signal.aborted, false);
  });
});
