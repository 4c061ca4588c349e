import assert from "node:assert/strict";
import { createDispatcher } from "../../src/mcp/dispatch.ts";
import type { Outcome } from "../../src/mcp/outcomes.ts";
import { INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND } from "../../src/mcp/errors.ts";
import type { JsonRpcRequest } from "../../src/mcp/messages.ts";
import { createToolRegistry } from "../../src/mcp/registry.ts";
import type { ProtocolVersion } from "../../src/mcp/versions.ts";
import { TEST_TOOLS } from "./fixtures.ts";
import { listEveryTool } from "./wire.ts";

function setup(pageSize = 2, version: ProtocolVersion = "2025-11-25", tools = TEST_TOOLS) {
  const logs: string[] = [];
  const registry = createToolRegistry(tools, { pageSize });
  const dispatcher = createDispatcher<string>({
    serverInfo: { name: "test", title: "Test", version: "0.0.1" },
    instructions: "Be kind.",
    cache: { ttlMs: 60_000, scope: "public" },
    log: (line) => logs.push(line),
  });
  const call = async (
    method: string,
    params?: Record<string, unknown>,
    id: string | number = 1,
  ) => {
    const request: JsonRpcRequest = { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) };
    return await dispatcher.dispatch(request, {
      auth: "alice",
      version,
      registry,
      signal: new AbortController().signal,
    });
  };
  const replyOutcome = async (
    method: string,
    params?: Record<string, unknown>,
    id: string | number = 1,
  ) => {
    const outcome = await call(method, params, id);
    assert.equal(outcome.kind, "reply");
    return outcome as Extract<Outcome, { kind: "reply" }>;
  };
  const reply = async (
    method: string,
    params?: Record<string, unknown>,
    id: string | number = 1,
  ) => JSON.parse((await replyOutcome(method, params, id)).body);
  return { logs, call, reply, replyOutcome };
}

const INIT = { capabilities: {}, clientInfo: { name: "c", version: "1" } };

Deno.test("dispatcher: lifecycle", async (t) => {
  const { reply } = setup();
  const cases = [
    { asked: "2025-11-25", got: "2025-11-25" },
    { asked: "2025-06-18", got: "2025-06-18" },
    { asked: "2024-11-05", got: "2025-11-25" },
    { asked: "banana", got: "2025-11-25" },
  ];
  for (const c of cases) {
    await t.step(`initialize asking ${c.asked} is answered ${c.got}`, async () => {
      const response = await reply("initialize", { protocolVersion: c.asked, ...INIT }, "init");
      assert.deepEqual(response, {
        jsonrpc: "2.0",
        id: "init",
        result: {
          protocolVersion: c.got,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "test", title: "Test", version: "0.0.1" },
          instructions: "Be kind.",
        },
      });
    });
  }

  await t.step("initialize with bad params names each field", async () => {
    const response = await reply("initialize", {
      protocolVersion: 2025,
      capabilities: {},
      clientInfo: { name: "c" },
    });
    assert.equal(response.error.code, INVALID_PARAMS);
    assert.match(response.error.message, /"params\.protocolVersion"/);
    assert.match(response.error.message, /"params\.clientInfo\.version"/);
  });

  await t.step("initialize without params is -32602", async () => {
    const response = await reply("initialize");
    assert.equal(response.error.code, INVALID_PARAMS);
  });

  await t.step("ping answers an empty result", async () => {
    assert.deepEqual(await reply("ping", undefined, 9), { jsonrpc: "2.0", id: 9, result: {} });
  });

  await t.step("an unknown method is -32601 naming it", async () => {
    const response = await reply("resources/list");
    assert.equal(response.error.code, METHOD_NOT_FOUND);
    assert.equal(response.error.message, 'Method not found: "resources/list"');
  });
});

Deno.test("dispatcher: tools/list pages with opaque cursors", async (t) => {
  const { reply } = setup(2);
  await t.step("following nextCursor lists every tool once, in catalogue order", async () => {
    const { tools, pages } = await listEveryTool(async (cursor) =>
      (await reply("tools/list", cursor === undefined ? undefined : { cursor })).result
    );
    const names = tools.map((tool) => tool.name);
    assert.equal(pages, 3);
    assert.deepEqual(names, TEST_TOOLS.map((tool) => tool.name));
  });

  await t.step("an entry carries schemas, annotations and _meta", async () => {
    const [echo] = (await reply("tools/list")).result.tools;
    assert.deepEqual(echo, {
      name: "echo",
      title: "Echo",
      description: "Repeats text.",
      inputSchema: {
        type: "object",
        properties: {
          text: { type: "string", minLength: 1 },
          count: { type: "integer", minimum: 1 },
        },
        required: ["text", "count"],
        additionalProperties: false,
      },
      outputSchema: {
        type: "object",
        properties: { echoed: { type: "string" }, by: { type: "string" } },
        required: ["echoed", "by"],
      },
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      _meta: { "example.com/origin": "tests" },
    });
  });

  await t.step("a forged cursor is -32602", async () => {
    const response = await reply("tools/list", { cursor: "Mg" });
    assert.equal(response.error.code, INVALID_PARAMS);
    assert.match(response.error.message, /cursor was not issued by this server/);
  });

  await t.step(
    "a cursor of another instance with the same catalogue (a replica) is taken",
    async () => {
      const other = setup(2);
      const { nextCursor } = (await other.reply("tools/list")).result;
      const response = await reply("tools/list", { cursor: nextCursor });
      assert.equal(response.result.tools[0].name, TEST_TOOLS[2]!.name);
    },
  );

  await t.step("a cursor of another catalogue (an upgrade) is stale: -32602", async () => {
    const other = setup(2, "2025-11-25", [...TEST_TOOLS].reverse());
    const { nextCursor } = (await other.reply("tools/list")).result;
    const response = await reply("tools/list", { cursor: nextCursor });
    assert.equal(response.error.code, INVALID_PARAMS);
  });

  await t.step("a cursor that is not a string is -32602", async () => {
    const response = await reply("tools/list", { cursor: 2 });
    assert.equal(response.error.code, INVALID_PARAMS);
    assert.match(response.error.message, /"params\.cursor"/);
  });
});

Deno.test("dispatcher: tools/call", async (t) => {
  const { reply, call, logs } = setup();

  await t.step("a result carries structuredContent and its text block", async () => {
    const response = await reply("tools/call", {
      name: "echo",
      arguments: { text: "ab", count: 2 },
    });
    assert.deepEqual(response.result, {
      content: [{ type: "text", text: "echo: abab" }],
      structuredContent: { echoed: "abab", by: "alice" },
    });
  });

  await t.step("invalid arguments give isError naming each bad field", async () => {
    const response = await reply("tools/call", {
      name: "echo",
      arguments: { text: "", count: 1.5, extra: true },
    });
    assert.equal(response.result.isError, true);
    const text: string = response.result.content[0].text;
    // Plain words naming each field, never the validator's ("Expected never but received").
    assert.equal(
      text,
      'Invalid arguments: "text" length must be at least 1, not 0; "count" must be a whole ' +
        'number, not 1.5; "extra" is not a known field',
    );
    assert.equal(response.result.structuredContent, undefined);
  });

  await t.step("missing arguments are validated as an empty object", async () => {
    const response = await reply("tools/call", { name: "echo" });
    assert.equal(response.result.isError, true);
    assert.match(response.result.content[0].text, /"text" is missing; "count" is missing/);
  });

  await t.step("an unknown tool is -32602 naming it", async () => {
    const response = await reply("tools/call", { name: "nope" });
    assert.equal(response.error.code, INVALID_PARAMS);
    assert.equal(response.error.message, 'Unknown tool: "nope"');
  });

  await t.step("tools/call without a name is -32602", async () => {
    const response = await reply("tools/call", { arguments: {} });
    assert.equal(response.error.code, INVALID_PARAMS);
    assert.match(response.error.message, /"params\.name"/);
  });

  await t.step("a ToolError becomes isError with its message", async () => {
    const response = await reply("tools/call", { name: "refuse" });
    assert.deepEqual(response.result, {
      content: [{ type: "text", text: "No business is selected" }],
      isError: true,
    });
  });

  await t.step("an unexpected error is -32603 without internals, and is logged", async () => {
    const response = await reply("tools/call", { name: "crash" }, 5);
    assert.deepEqual(response, {
      jsonrpc: "2.0",
      id: 5,
      error: { code: INTERNAL_ERROR, message: "Internal error" },
    });
    const line = JSON.parse(logs.find((l) => l.includes('"level":"error"'))!);
    assert.equal(line.method, "tools/call");
    assert.match(line.stack, /\n\s+at .*fixtures\.ts:\d+:\d+/, "the stack points at the tool");
  });

  await t.step("output that breaks its own schema is -32603, never sent", async () => {
    const response = await reply("tools/call", { name: "liar" });
    assert.equal(response.error.code, INTERNAL_ERROR);
    assert.ok(!JSON.stringify(response).includes("three"));
    const line = logs.find((l) => l.includes("liar"));
    assert.ok(line !== undefined);
    assert.match(line, /"fields":\["count"\]/);
    assert.ok(!line.includes("three"), "the log names the field, not the value");
  });

  await t.step(
    "a progressToken on a progress tool streams notifications, then the result",
    async () => {
      const outcome = await call("tools/call", {
        name: "count_up",
        arguments: { steps: 2 },
        _meta: { progressToken: "tok" },
      });
      assert.equal(outcome.kind, "stream");
      if (outcome.kind !== "stream") return;
      const sent: unknown[] = [];
      const last = await outcome.run((message) => {
        sent.push(JSON.parse(message));
        return Promise.resolve();
      });
      assert.deepEqual(sent, [
        {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: "tok", progress: 1, total: 2, message: "step 1" },
        },
        {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: "tok", progress: 2, total: 2, message: "step 2" },
        },
      ]);
      assert.deepEqual(JSON.parse(last.body).result.structuredContent, { done: 2 });
    },
  );

  await t.step("without a progressToken the same tool answers one reply", async () => {
    const outcome = await call("tools/call", { name: "count_up", arguments: { steps: 2 } });
    assert.equal(outcome.kind, "reply");
  });

  await t.step("a progressToken on a tool that reports none answers one reply", async () => {
    const outcome = await call("tools/call", {
      name: "echo",
      arguments: { text: "a", count: 1 },
      _meta: { progressToken: 1 },
    });
    assert.equal(outcome.kind, "reply");
  });
});

Deno.test("dispatcher: 2026-07-28", async (t) => {
  const { reply, replyOutcome, call } = setup(2, "2026-07-28");
  const legacy = setup(2, "2025-11-25");
  const serverInfo = {
    "io.modelcontextprotocol/serverInfo": { name: "test", title: "Test", version: "0.0.1" },
  };

  await t.step("server/discover: versions, capabilities, identity and caching hints", async () => {
    assert.deepEqual(await reply("server/discover", {}, "d"), {
      jsonrpc: "2.0",
      id: "d",
      result: {
        resultType: "complete",
        supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
        capabilities: { tools: { listChanged: false } },
        instructions: "Be kind.",
        ttlMs: 60_000,
        cacheScope: "public",
        _meta: serverInfo,
      },
    });
  });

  await t.step("tools/list pages carry resultType, caching hints and serverInfo", async () => {
    const { result } = await reply("tools/list");
    const old = (await legacy.reply("tools/list")).result;
    assert.deepEqual(result, {
      resultType: "complete",
      tools: old.tools,
      nextCursor: result.nextCursor,
      ttlMs: 60_000,
      cacheScope: "public",
      _meta: serverInfo,
    });
    assert.equal(typeof result.nextCursor, "string");
    assert.deepEqual(Object.keys(old), ["tools", "nextCursor"], "2025 pages are unchanged");
  });

  await t.step("the same tools in the same order, page after page, call after call", async () => {
    const list = async () => {
      const { tools } = await listEveryTool(async (cursor) => {
        const { result } = await reply("tools/list", cursor === undefined ? {} : { cursor });
        assert.equal(result.cacheScope, "public", "every page has the same scope");
        return result;
      });
      return tools.map((tool) => tool.name);
    };
    const first = await list();
    assert.deepEqual(first, TEST_TOOLS.map((tool) => tool.name));
    assert.deepEqual(await list(), first);
  });

  await t.step("a tool result carries resultType and serverInfo", async () => {
    const { result } = await reply("tools/call", {
      name: "echo",
      arguments: { text: "a", count: 2 },
    });
    assert.deepEqual(result, {
      resultType: "complete",
      content: [{ type: "text", text: "echo: aa" }],
      structuredContent: { echoed: "aa", by: "alice" },
      _meta: serverInfo,
    });
    const refused = (await reply("tools/call", { name: "refuse" })).result;
    assert.equal(refused.resultType, "complete");
    assert.equal(refused.isError, true);
    const invalid = (await reply("tools/call", { name: "echo", arguments: {} })).result;
    assert.deepEqual([invalid.resultType, invalid.isError], ["complete", true]);
  });

  await t.step("a streamed tool call ends with a complete result", async () => {
    const outcome = await call("tools/call", {
      name: "count_up",
      arguments: { steps: 1 },
      _meta: { progressToken: "p" },
    });
    assert.equal(outcome.kind, "stream");
    if (outcome.kind !== "stream") return;
    const last = JSON.parse((await outcome.run(() => Promise.resolve())).body);
    assert.equal(last.result.resultType, "complete");
    assert.deepEqual(last.result._meta, serverInfo);
  });

  await t.step("initialize and ping are not part of 2026-07-28: -32601", async () => {
    for (const method of ["initialize", "ping"]) {
      const outcome = await replyOutcome(method, {}, 3);
      assert.equal(outcome.errorCode, METHOD_NOT_FOUND);
      const body = JSON.parse(outcome.body);
      assert.equal(body.id, 3);
      assert.match(body.error.message, /is not part of MCP 2026-07-28; requests carry/);
    }
  });

  await t.step("server/discover is not part of the 2025 revisions: -32601", async () => {
    const outcome = await legacy.replyOutcome("server/discover", {}, 4);
    assert.equal(outcome.errorCode, METHOD_NOT_FOUND);
    assert.match(JSON.parse(outcome.body).error.message, /part of MCP 2026-07-28/);
  });

  await t.step("logging/setLevel was never offered: -32601 in both revisions", async () => {
    for (const dispatcher of [replyOutcome, legacy.replyOutcome]) {
      const outcome = await dispatcher("logging/setLevel", { level: "info" });
      assert.equal(outcome.errorCode, METHOD_NOT_FOUND);
    }
  });

  await t.step("an error reply names its code; a result names none", async () => {
    assert.equal(
      (await replyOutcome("tools/list", { cursor: "forged" })).errorCode,
      INVALID_PARAMS,
    );
    assert.equal((await replyOutcome("tools/list")).errorCode, undefined);
  });
});
