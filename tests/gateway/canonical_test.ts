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
});
