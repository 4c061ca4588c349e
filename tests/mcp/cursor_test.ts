import assert from "node:assert/strict";
import { createPageCursors } from "../../src/mcp/cursor.ts";

/** Deterministic "randomness": each call fills with the next counter value. */
function counter() {
  let n = 0;
  return (bytes: Uint8Array) => bytes.fill(++n);
}

Deno.test("page cursors", async (t) => {
  await t.step("each offset has one opaque cursor that maps back to it", () => {
    const cursors = createPageCursors({ offsets: [2, 4], random: counter() });
    const a = cursors.cursorFor(2);
    const b = cursors.cursorFor(4);
    assert.notEqual(a, b);
    assert.doesNotMatch(a, /^\d+$/);
    assert.match(a, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(cursors.offsetOf(a), 2);
    assert.equal(cursors.offsetOf(b), 4);
  });

  await t.step("a forged or altered cursor is refused", () => {
    const cursors = createPageCursors({ offsets: [2] });
    const real = cursors.cursorFor(2);
    const altered = (real[0] === "A" ? "B" : "A") + real.slice(1);
    for (const forged of [altered, "2", "", real + "A", real.slice(1)]) {
      assert.equal(cursors.offsetOf(forged), undefined, forged);
    }
  });

  await t.step("a cursor of another process (another key) is stale", () => {
    const before = createPageCursors({ offsets: [2] });
    const after = createPageCursors({ offsets: [2] });
    assert.equal(after.offsetOf(before.cursorFor(2)), undefined);
  });

  await t.step("asking for a cursor of an offset that is no page boundary throws", () => {
    const cursors = createPageCursors({ offsets: [2] });
    assert.throws(() => cursors.cursorFor(3), RangeError);
  });

  await t.step("repeated randomness is detected", () => {
    assert.throws(
      () => createPageCursors({ offsets: [1, 2], random: (b) => b.fill(9) }),
      /repeated/,
    );
  });
});
