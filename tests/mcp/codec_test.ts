import assert from "node:assert/strict";
import { classifyMessage, decodeMessage, encodeResult } from "../../src/mcp/codec.ts";
import { INVALID_REQUEST, PARSE_ERROR } from "../../src/mcp/errors.ts";
import { JsonRpcRequestSchema } from "../../src/mcp/messages.ts";
import * as v from "valibot";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("codec classifies what a client posts", async (t) => {
  await t.step("a request keeps its id, method and params", () => {
    const decoded = decodeMessage(bytes('{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}'));
    assert.deepEqual(decoded, {
      kind: "request",
      request: { jsonrpc: "2.0", id: 7, method: "ping", params: {} },
    });
  });

  await t.step("a message without id is a notification", () => {
    const decoded = decodeMessage(bytes('{"jsonrpc":"2.0","method":"notifications/initialized"}'));
    assert.equal(decoded.kind, "notification");
  });

  await t.step("a result or error posted by the client is a response", () => {
    assert.equal(decodeMessage(bytes('{"jsonrpc":"2.0","id":"a","result":{}}')).kind, "response");
    assert.equal(
      decodeMessage(bytes('{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}')).kind,
      "response",
    );
  });

  const invalid = [
    { name: "not JSON", body: "{", code: PARSE_ERROR, id: null, message: /^Parse error/ },
    {
      name: "invalid UTF-8",
      body: new Uint8Array([0x22, 0xff, 0x22]),
      code: PARSE_ERROR,
      id: null,
      message: /UTF-8/,
    },
    {
      name: "a batch",
      body: '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      code: INVALID_REQUEST,
      id: null,
      message: /batches are not supported/,
    },
    {
      name: "a bare number",
      body: "42",
      code: INVALID_REQUEST,
      id: null,
      message: /expected a JSON-RPC object/,
    },
    {
      name: "a wrong jsonrpc version",
      body: '{"jsonrpc":"1.0","id":3,"method":"ping"}',
      code: INVALID_REQUEST,
      id: 3,
      message: /"jsonrpc"/,
    },
    {
      name: "a null id",
      body: '{"jsonrpc":"2.0","id":null,"method":"ping"}',
      code: INVALID_REQUEST,
      id: null,
      message: /"id"/,
    },
    {
      name: "a fractional id",
      body: '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
      code: INVALID_REQUEST,
      id: null,
      message: /"id"/,
    },
    {
      name: "array params",
      body: '{"jsonrpc":"2.0","id":"x","method":"ping","params":[1]}',
      code: INVALID_REQUEST,
      id: "x",
      message: /"params"/,
    },
    {
      name: "no method",
      body: '{"jsonrpc":"2.0","id":4}',
      code: INVALID_REQUEST,
      id: 4,
      message: /"method" is missing/,
    },
  ];
  for (const c of invalid) {
    await t.step(`${c.name} is refused with ${c.code}`, () => {
      const decoded = decodeMessage(typeof c.body === "string" ? bytes(c.body) : c.body);
      assert.equal(decoded.kind, "invalid");
      if (decoded.kind !== "invalid") return;
      assert.equal(decoded.error.id, c.id);
      assert.equal(decoded.error.error.code, c.code);
      assert.match(decoded.error.error.message, c.message);
    });
  }

  await t.step("classifyMessage refuses null", () => {
    assert.equal(classifyMessage(null).kind, "invalid");
  });
});

Deno.test("codec encodes a precomputed result around any id", () => {
  assert.deepEqual(JSON.parse(encodeResult('a"b', '{"x":1}')), {
    jsonrpc: "2.0",
    id: 'a"b',
    result: { x: 1 },
  });
  assert.equal(encodeResult(5, "{}"), '{"jsonrpc":"2.0","id":5,"result":{}}');
  assert.deepEqual(JSON.parse(encodeResult("né", "{}")).id, "né");
});

Deno.test("codec: every request it accepts is exactly what JsonRpcRequestSchema accepts", () => {
  // The usual envelope skips valibot; this walks the shapes around it so that the shortcut
  // can never accept, or alter, what the schema would not.
  const ids = [1, 0, -7, 2 ** 53, 1.5, "a", "", null, true, {}, undefined];
  const methods = ["tools/list", "", 5, undefined];
  const params = [
    undefined,
    {},
    { cursor: "x" },
    { _meta: {} },
    { _meta: 5 },
    { _meta: [] },
    { _meta: null },
    { _meta: { progressToken: 3 } },
    { _meta: { progressToken: "t" } },
    { _meta: { progressToken: 1.5 } },
    { _meta: { progressToken: null } },
    {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
    [],
    null,
    "p",
    // Keys valibot never copies; JSON.parse makes "__proto__" an own key.
    JSON.parse('{"__proto__":{}}'),
    { constructor: 1 },
    { prototype: 1 },
    { _meta: JSON.parse('{"__proto__":{}}') },
    { _meta: { constructor: 1 } },
  ];
  const versions = ["2.0", "1.0", 2, undefined];
  const extras = [{}, { extra: 1 }, { result: {} }];
  let accepted = 0;
  for (const id of ids) {
    for (const method of methods) {
      for (const param of params) {
        for (const jsonrpc of versions) {
          for (const extra of extras) {
            const message: Record<string, unknown> = { ...extra };
            if (jsonrpc !== undefined) message.jsonrpc = jsonrpc;
            if (id !== undefined) message.id = id;
            if (method !== undefined) message.method = method;
            if (param !== undefined) message.params = param;
            const decoded = classifyMessage(structuredClone(message));
            const schema = v.safeParse(JsonRpcRequestSchema, structuredClone(message));
            const label = JSON.stringify(message);
            if (decoded.kind === "request") {
              accepted++;
              assert.ok(schema.success, label);
              assert.deepEqual(decoded.request, schema.output, label);
            } else if (schema.success && !Array.isArray(message.params)) {
              assert.fail(`the schema accepts what the codec refused: ${label}`);
            }
          }
        }
      }
    }
  }
  assert.ok(accepted > 0);
});
