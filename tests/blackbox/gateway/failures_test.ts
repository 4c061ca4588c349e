// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the test picks apart
// What upstreams do wrong never becomes the agent's outage: a killed server-everything is an
// isError result naming it (never a 5xx) and its restart is picked up; a hand-written hostile
// upstream's oversized answer, invalid JSON and sampling request end as tool errors or refusals;
// an upstream never reachable, a tool listed twice, a name too long and a schema that is not an
// object cost only themselves, and each is logged.
import assert from "node:assert/strict";
import { startEverythingHttp } from "../../../testkit/upstreams.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { freePorts } from "../../../testkit/ports.ts";
import {
  callWithProgress,
  sseEvent,
  sseMessages,
  startGatewayServer,
  startHostileUpstream,
  until,
} from "../support/gateway_support.ts";

const OBJECT = { type: "object", properties: {} };
const LONG = "a-tool-name-that-is-fine-upstream-but-too-long-with-a-prefix-x";

Deno.test("upstream failures end as tool errors and cost only that upstream", async (t) => {
  let everything = await startEverythingHttp();
  const tiny = startTinyUpstream();
  const hostile = startHostileUpstream([
    { name: "huge", inputSchema: OBJECT },
    { name: "garbled", inputSchema: OBJECT },
    { name: "asks", inputSchema: OBJECT },
    { name: "twice", description: "first", inputSchema: OBJECT },
    { name: "twice", description: "second", inputSchema: OBJECT },
    { name: LONG, inputSchema: OBJECT },
    { name: "listy", inputSchema: { type: "array" } },
    { name: "fine", inputSchema: OBJECT },
  ], (id, name) => {
    switch (name) {
      case "huge":
        return Response.json({
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: "x".repeat(10 * 1024 * 1024) }] },
        });
      case "garbled":
        return new Response('{"jsonrpc":"2.0","id":', {
          headers: { "Content-Type": "application/json" },
        });
      case "asks":
        return new Response(
          sseEvent({
            jsonrpc: "2.0",
            id: "s-1",
            method: "sampling/createMessage",
            params: { messages: [], maxTokens: 10 },
          }) +
            sseEvent({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "ok" }] } }),
          { headers: { "Content-Type": "text/event-stream" } },
        );
      default:
        return Response.json({ jsonrpc: "2.0", id, result: { content: [] } });
    }
  });
  const [nowhere] = freePorts(1);
  const ws = await startGatewayServer([
    { name: "everything", title: "Everything", url: everything.url, timeoutSeconds: 30 },
    { name: "tiny", title: "Tiny", url: tiny.url },
    { name: "hostile", title: "Hostile", url: hostile.url },
    { name: "nowhere", title: "Nowhere", url: `http://127.0.0.1:${nowhere}/mcp` },
  ]);
  const { token } = await ws.token([
    "app.access",
    "upstream.everything",
    "upstream.tiny",
    "upstream.hostile",
    "upstream.nowhere",
  ]);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200, JSON.stringify(message));
    return message.result;
  };
  try {
    await t.step("a server never reachable is left out, named in the log", async () => {
      const names = await ws.toolNames(token);
      assert.ok(names.includes("everything__echo"));
      assert.ok(names.includes("tiny__add"));
      assert.ok(names.includes("hostile__fine"));
      assert.ok(!names.some((name) => name.startsWith("nowhere__")), names.join(" "));
      assert.ok(
        ws.server.logs.some((line) =>
          line.includes("upstream not answering") && line.includes('"upstream":"nowhere"')
        ),
        ws.server.logs.join("\n"),
      );
    });

    await t.step(
      "a tool listed twice, a name too long, a schema not an object: left out, logged",
      async () => {
        const names = await ws.toolNames(token);
        assert.deepEqual(names.filter((name) => name.startsWith("hostile__")), [
          "hostile__huge",
          "hostile__garbled",
          "hostile__asks",
          "hostile__twice",
          "hostile__fine",
        ]);
        const twice = (await ws.tools(token)).find((tool) => tool.name === "hostile__twice")!;
        assert.match(twice.description, /^first /);
        const logged = (problem: string, tool: string) =>
          ws.server.logs.some((line) => line.includes(problem) && line.includes(tool));
        assert.ok(logged("lists a tool name twice", '"tool":"twice"'), ws.server.logs.join("\n"));
        assert.ok(logged("unusable in the workspace", LONG), ws.server.logs.join("\n"));
        assert.ok(logged("upstream tool left out", '"tool":"listy"'), ws.server.logs.join("\n"));
        assert.deepEqual(await call("hostile__fine"), { content: [] });
      },
    );

    await t.step("an answer over the size cap is an isError naming the cap", async () => {
      const result = await call("hostile__huge");
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /Hostile/);
      assert.match(result.content[0].text, /more than 4194304 bytes/);
    });

    await t.step("invalid JSON is an isError", async () => {
      const result = await call("hostile__garbled");
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /Hostile/);
    });

    await t.step("a sampling request gets a JSON-RPC error back; the call still ends", async () => {
      assert.deepEqual(await call("hostile__asks"), { content: [{ type: "text", text: "ok" }] });
      const refusal = await until("the refusal posted back", () => hostile.responses[0]);
      assert.equal(refusal.id, "s-1");
      assert.equal(typeof refusal.error?.code, "number");
      assert.equal(refusal.result, undefined);
    });

    await t.step("an upstream killed mid-call is a 200 isError within seconds", async () => {
      const response = await ws.post(
        token,
        callWithProgress(1, "everything__trigger-long-running-operation", {
          duration: 60,
          steps: 120,
        }),
      );
      assert.equal(response.status, 200);
      const messages = sseMessages(response);
      // The first progress says the call is running at the upstream: kill it then.
      assert.equal((await messages.next()).value?.method, "notifications/progress");
      const killed = performance.now();
      await everything.kill();
      let last: Record<string, any> | undefined;
      for await (const message of messages) last = message;
      assert.ok(performance.now() - killed < 5_000, `${performance.now() - killed} ms`);
      assert.equal(last?.result?.isError, true, JSON.stringify(last));
      assert.match(last.result.content[0].text, /Everything/);
    });

    await t.step(
      "meanwhile tools/list serves Vestibule's tools and the other upstreams",
      async () => {
        const names = await ws.toolNames(token);
        for (const name of ["get_agent_connection_setup", "tiny__add", "hostile__fine"]) {
          assert.ok(names.includes(name), name);
        }
        assert.deepEqual(await call("tiny__add", { a: 2, b: 3 }), {
          content: [{ type: "text", text: "5" }],
          structuredContent: { sum: 5 },
        });
        const down = await call("everything__echo", { message: "anyone?" });
        assert.equal(down.isError, true);
        assert.match(down.content[0].text, /Everything/);
      },
    );

    await t.step("restarted on the same port, the next call works in a new session", async () => {
      everything = await startEverythingHttp(everything.port);
      const result = await until("a call after the restart", async () => {
        const answer = await call("everything__echo", { message: "back" });
        return answer.isError !== true && answer;
      }, 20_000);
      assert.deepEqual(result.content, [{ type: "text", text: "Echo: back" }]);
    });
  } finally {
    await ws.close();
    await everything.kill();
    await tiny.close();
    await hostile.close();
  }
});
