import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { fuzzRuns } from "../fuzz/fuzz_support.ts";
import { canonicalJson, canonicalSha256 } from "../../src/canonical_json.ts";

Deno.test("canonical JSON sorts members at every depth and drops no array order", () => {
  assert.equal(
    canonicalJson({ b: [3, { d: 1, c: 2 }], a: "é", "": null }),
    '{"":null,"a":"é","b":[3,{"c":2,"d":1}]}',
  );
});

Deno.test("arguments hash alike whatever order their members came in", () => {
  fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
      const reversed = Object.fromEntries(Object.entries(value).reverse());
      assert.equal(canonicalSha256(reversed), canonicalSha256(value));
      assert.deepEqual(JSON.parse(canonicalJson(value)), JSON.parse(JSON.stringify(value)));
    }),
    fuzzRuns(200),
  );
  assert.match(canonicalSha256({}), /^[0-9a-f]{64}$/);
  assert.notEqual(canonicalSha256({ a: 1 }), canonicalSha256({ a: 2 }));
  // The SHA-256 of the text `{"a":1,"b":2}` (sha256sum), whatever order the members came in.
  assert.equal(
    canonicalSha256({ b: 2, a: 1 }),
    "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777",
  );
});
