import assert from "node:assert/strict";
import * as v from "valibot";
import { describeIssue } from "../src/issue_words.ts";

const Schema = v.strictObject({
  name: v.string(),
  count: v.pipe(v.number(), v.minValue(1)),
  kind: v.picklist(["a", "b"]),
  id: v.union([v.string(), v.number()]),
  tags: v.pipe(v.array(v.string()), v.minLength(1)),
  inner: v.object({ email: v.pipe(v.string(), v.email()) }),
  own: v.pipe(v.string(), v.check((s) => s === "x", "must be x")),
});

function described(input: unknown, prefix?: string): string[] {
  const result = v.safeParse(Schema, input, { abortEarly: false });
  assert.ok(!result.success);
  return result.issues.map((issue) => describeIssue(issue, prefix));
}

Deno.test("issue words: each field named, in plain words, never the validator's", () => {
  assert.deepEqual(
    described({
      nam: "typo",
      count: 0,
      kind: "c",
      id: true,
      tags: [],
      inner: { email: "nope" },
      own: "y",
    }),
    [
      '"name" is missing',
      '"count" must be at least 1, not 0',
      '"kind" must be "a" or "b", not "c"',
      '"id" must be a string or a number, not true',
      '"tags" length must be at least 1, not 0',
      '"inner.email" must be an e-mail address, not "nope"',
      '"own": must be x',
      '"nam" is not a known field',
    ],
  );
});

Deno.test("issue words: a prefix goes before the path; an issue without a path is its words alone", () => {
  assert.deepEqual(described({}, "params").slice(0, 1), ['"params.name" is missing']);
  const bare = v.safeParse(v.string(), 5);
  assert.ok(!bare.success);
  assert.equal(describeIssue(bare.issues[0]), "must be a string, not 5");
});
