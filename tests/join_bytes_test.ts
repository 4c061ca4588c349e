import assert from "node:assert/strict";
import { joinBytes } from "../src/join_bytes.ts";

Deno.test("joinBytes: one part is itself, several are copied in order, none is empty", () => {
  const one = new Uint8Array([1, 2, 3]);
  assert.equal(joinBytes([one]), one);
  const parts = [new Uint8Array([1]), new Uint8Array(0), new Uint8Array([2, 3]), one.subarray(2)];
  const joined = joinBytes(parts);
  assert.deepEqual([...joined], [1, 2, 3, 3]);
  assert.notEqual(joined.buffer, one.buffer);
  assert.deepEqual([...joinBytes(parts, 4)], [1, 2, 3, 3]);
  assert.equal(joinBytes([]).byteLength, 0);
});
