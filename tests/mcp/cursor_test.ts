import assert from "node:assert/strict";
import { createPageCursors } from "../../src/mcp/cursor.ts";

const CATALOGUE = JSON.stringify([{ name: "a" }, { name: "b" }, { name: "c" }]);

Deno.test("page cursors", async (t) => {
  await t.step("each offset has one opaque cursor that maps back to it", () => {
    const cursors = createPageCursors({ offsets: [2, 4], catalogue: CATALOGUE });
    const a = cursors.cursorFor(2);
    const b = cursors.cursorFor(4);
    assert.notEqual(a, b);
    assert.doesNotMatch(a, /^\d+$/);
    assert.match(a, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(cursors.offsetOf(a), 2);
    assert.equal(cursors.offsetOf(b), 4);
  });

  await t.step("a forged or altered cursor is refused", () => {
    const cursors = createPageCursors({ offsets: [2], catalogue: CATALOGUE });
    const real = cursors.cursorFor(2);
    const altered = (real[0] === "A" ? "B" : "A") + real.slice(1);
    for (const forged of [altered, "2", "", real + "A", real.slice(1)]) {
      assert.equal(cursors.offsetOf(forged), undefined, forged);
    }
  });

  await t.step("another process with the same catalogue (a replica) takes the same cursors", () => {
    const one = createPageCursors({ offsets: [2], catalogue: CATALOGUE });
    const other = createPageCursors({ offsets: [2], catalogue: CATALOGUE });
    assert.equal(other.offsetOf(one.cursorFor(2)), 2);
  });

  await t.step("a cursor of another catalogue (an upgrade) is stale", () => {
    const before = createPageCursors({ offsets: [2], catalogue: CATALOGUE });
    const after = createPageCursors({ offsets: [2], catalogue: CATALOGUE + " " });
    assert.equal(after.offsetOf(before.cursorFor(2)), undefined);
  });

  await t.step("asking for a cursor of an offset that is no page boundary throws", () => {
    const cursors = createPageCursors({ offsets: [2], catalogue: CATALOGUE });
    assert.throws(() => cursors.cursorFor(3), RangeError);
  });
});
