import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { fuzzRuns } from "../fuzz/fuzz_support.ts";
import { lineDiff } from "../../src/ui/line_diff.ts";

Deno.test("a line diff marks the one changed line as removed and added, the rest the same", () => {
  assert.deepEqual(lineDiff("a\nb\nc", "a\nB\nc"), [
    { kind: "same", text: "a" },
    { kind: "removed", text: "b" },
    { kind: "added", text: "B" },
    { kind: "same", text: "c" },
  ]);
});

Deno.test("a line diff's kept and removed lines are the old text, its kept and added lines the new", () => {
  const text = fc.array(fc.constantFrom("x", "y", "z", "{", "}"), { maxLength: 30 }).map((l) =>
    l.join("\n")
  );
  fc.assert(
    fc.property(text, text, (before, after) => {
      const lines = lineDiff(before, after);
      const side = (skip: string) =>
        lines.filter((l) => l.kind !== skip).map((l) => l.text).join("\n");
      assert.equal(side("added"), before);
      assert.equal(side("removed"), after);
    }),
    fuzzRuns(200),
  );
});
