import assert from "node:assert/strict";
import { argumentsSummary } from "../../../src/workspace/domain/gate_words.ts";

Deno.test("an argument summary shows the first three values as written, on one short line", () => {
  assert.equal(
    argumentsSummary({ order: 1042, amount: "120.00", currency: "USD" }),
    "order 1042, amount 120.00, currency USD",
  );
  assert.equal(argumentsSummary({ a: 1, b: true, c: null, d: 4 }), "a 1, b true, c null, …");
  assert.equal(argumentsSummary({ to: { iban: "DE1" } }), 'to {"iban":"DE1"}');
  assert.equal(argumentsSummary({ note: "two\r\nlines\u0007 here" }), "note two lines here");
  assert.equal(argumentsSummary({ long: "x".repeat(100) }), `long ${"x".repeat(39)}…`);
  assert.equal(argumentsSummary({}), "");
});
