import assert from "node:assert/strict";
import { BoundedMap } from "../src/bounded_map.ts";

Deno.test("bounded map: the least recently written entry goes first past the bound", () => {
  const map = new BoundedMap<string, number>(2);
  map.set("a", 1);
  map.set("b", 2);
  map.set("a", 3); // written again: now the newest
  map.set("c", 4);
  assert.equal(map.size, 2);
  assert.equal(map.get("b"), undefined);
  assert.equal(map.get("a"), 3);
  assert.equal(map.get("c"), 4);
  assert.equal(map.delete("a"), true);
  assert.equal(map.get("a"), undefined);
  assert.equal(map.size, 1);
});
