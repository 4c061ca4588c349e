import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { decodeKey, encodeKey, prefixRange } from "../../src/store/key_codec.ts";
import type { Key } from "../../src/store/store.ts";

const part = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.constantFrom("", "\0", "a\0b", "é"),
  fc.double({ noNaN: true }).filter((n) => !Object.is(n, -0)),
  fc.integer(),
);
const key = fc.array(part, { minLength: 1, maxLength: 4 });

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

Deno.test("key codec: every key decodes to itself", () => {
  fc.assert(fc.property(key, (k) => assert.deepEqual(decodeKey(encodeKey(k)), k)));
});

Deno.test("key codec: byte order of the encoded keys is Deno KV's list order", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(key, { selector: (k) => JSON.stringify(k) }),
        async (keys) => {
          for await (const entry of kv.list({ prefix: [] })) await kv.delete(entry.key);
          for (const k of keys) await kv.set(k, true);
          const kvOrder: Key[] = [];
          for await (const entry of kv.list({ prefix: [] })) kvOrder.push(entry.key as Key);
          const byteOrder = [...keys].sort((a, b) => compareBytes(encodeKey(a), encodeKey(b)));
          assert.deepEqual(byteOrder, kvOrder);
        },
      ),
      { numRuns: 200 },
    );
  } finally {
    kv.close();
  }
});

Deno.test("key codec: a prefix's range holds exactly the longer keys that start with it", () => {
  fc.assert(fc.property(key, key, (prefix, other) => {
    const { from, to } = prefixRange(prefix);
    const inside = (k: Key) => {
      const bytes = encodeKey(k);
      return compareBytes(bytes, from) >= 0 && compareBytes(bytes, to) < 0;
    };
    assert.equal(inside(prefix), false, "the prefix itself is not listed");
    assert.equal(inside([...prefix, ...other]), true);
    const startsWith = other.length > prefix.length &&
      prefix.every((p, i) => Object.is(p, other[i]));
    assert.equal(inside(other), startsWith);
  }));
});
