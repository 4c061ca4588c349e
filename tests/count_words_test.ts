import assert from "node:assert/strict";
import { countOf, minutesOf } from "../src/count_words.ts";

Deno.test("a count takes the singular for exactly one and the plural otherwise", async (t) => {
  const cases: [number, string, string | undefined, string][] = [
    [0, "minute", undefined, "0 minutes"],
    [1, "minute", undefined, "1 minute"],
    [2, "minute", undefined, "2 minutes"],
    [1, "entry", "entries", "1 entry"],
    [5, "entry", "entries", "5 entries"],
    [1, "signing key", undefined, "1 signing key"],
  ];
  for (const [n, singular, plural, expected] of cases) {
    await t.step(expected, () => assert.equal(countOf(n, singular, plural), expected));
  }
});

Deno.test("a wait reads in whole minutes, rounded up, never zero", async (t) => {
  const cases: [number, string][] = [[1, "1 minute"], [60, "1 minute"], [61, "2 minutes"], [
    180,
    "3 minutes",
  ], [0, "1 minute"]];
  for (const [seconds, expected] of cases) {
    await t.step(`${seconds} s: ${expected}`, () => assert.equal(minutesOf(seconds), expected));
  }
});
