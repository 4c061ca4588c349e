// Generated JSON-RPC messages and bodies, right and wrong, for the codec and the endpoints.
import fc from "npm:fast-check@^4.10.2";
import { hostileText } from "./fuzz_support.ts";

const encoder = new TextEncoder();

/** Valid request ids: integers (up to the doubles' safe range and beyond) and strings. */
export const requestId: fc.Arbitrary<number | string> = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(0, -1, 2 ** 53, 1e21),
  hostileText,
);

/** Anything a client could put where a field belongs. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  fc.constantFrom(null, true, 0.5, -0, 1e308, "", "2.0", [], {}),
  hostileText,
);

const params = fc.oneof(
  fc.dictionary(hostileText, anyValue, { maxKeys: 4 }),
  fc.record({ _meta: fc.oneof(anyValue, fc.record({ progressToken: requestId })) }),
  fc.record({ cursor: anyValue }),
  fc.record({ name: hostileText, arguments: anyValue }),
  anyValue,
);

/** Requests with at most the four request keys, each right or a little wrong. */
const nearRequest = fc.record({
  jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant("2.0") }, anyValue),
  id: fc.oneof({ weight: 2, arbitrary: requestId }, fc.double(), anyValue),
  method: fc.oneof({ weight: 3, arbitrary: hostileText }, anyValue),
  params,
}, { requiredKeys: ["jsonrpc", "id", "method"] });

/** Objects shaped like JSON-RPC messages, each field present or not, right or wrong. */
export const messageLike: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  nearRequest,
  fc.record({
    jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant("2.0") }, anyValue),
    id: fc.oneof({ weight: 3, arbitrary: requestId }, anyValue),
    method: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          "initialize",
          "ping",
          "tools/list",
          "tools/call",
          "notifications/initialized",
        ),
      },
      hostileText,
      anyValue,
    ),
    params,
    result: anyValue,
    error: fc.oneof(fc.record({ code: fc.integer(), message: hostileText }), anyValue),
    extra: anyValue,
  }, { requiredKeys: [] }),
);

/** Bodies a client could send: `messages` as JSON, other JSON, broken JSON, arbitrary bytes. */
export function bodyOf(messages: fc.Arbitrary<unknown>): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 4, arbitrary: messages.map((m) => encoder.encode(JSON.stringify(m))) },
    fc.json({ maxDepth: 3 }).map((text) => encoder.encode(text)),
    messages.chain((m) => {
      const text = JSON.stringify(m) ?? "";
      return fc.nat(text.length).map((cut) => encoder.encode(text.slice(0, cut)));
    }),
    fc.uint8Array({ maxLength: 64 }),
    messages.map((m) => encoder.encode("\ufeff" + JSON.stringify(m))),
  );
}
