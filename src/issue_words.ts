// A valibot issue in plain words, naming its field: `"clientInfo" is missing`, `"nam" is not a
// known field`, `"name" must be a string, not 5`, instead of the validator's own
// `Invalid key: Expected never but received "nam"`. Messages a schema wrote itself stay as written.
import * as v from "valibot";

/** valibot's default messages: `Invalid type: Expected string but received 5`, `Invalid email: Received "x"`. */
const DEFAULT_MESSAGE = /^Invalid (\w+): (?:Expected (.*) but received (.*)|Received (.*))$/s;

/** One issue as `"path" phrase` (or `"path": message` for a schema's own words); `prefix` goes before the path. */
export function describeIssue(issue: v.BaseIssue<unknown>, prefix?: string): string {
  const own = v.getDotPath(issue);
  const path = prefix === undefined ? own : own === null ? prefix : `${prefix}.${own}`;
  const plain = _plainWords(issue);
  if (path === null) return plain ?? issue.message;
  return plain === null ? `"${path}": ${issue.message}` : `"${path}" ${plain}`;
}

/**
 * Every issue of a parse in one line, each named once: `"clientInfo.name" must be a string, not
 * 5; …`, each path under `prefix` when the issues are about a part of a message.
 */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], prefix?: string): string {
  return [...new Set(issues.map((issue) => describeIssue(issue, prefix)))].join("; ");
}

function _plainWords(issue: v.BaseIssue<unknown>): string | null {
  const match = DEFAULT_MESSAGE.exec(issue.message);
  if (match === null) return null;
  const [, what, expected, received, receivedAlone] = match as unknown as [
    string,
    string,
    string | undefined,
    string | undefined,
    string | undefined,
  ];
  if (what === "key") return expected === "never" ? "is not a known field" : "is missing";
  if (received === "undefined") return "is missing";
  if (expected === undefined) {
    return `must be ${NOUNS[what] ?? `a valid ${what}`}, not ${receivedAlone}`;
  }
  const subject = what === "type" || what === "value" ? "" : `${what} `;
  return `${subject}must be ${_expected(expected)}, not ${received}`;
}

/** Validation names valibot puts in `Invalid NAME: Received …`. */
const NOUNS: Readonly<Record<string, string>> = {
  email: "an e-mail address",
  integer: "a whole number",
  url: "a URL",
  format: "in the expected format",
};

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  boolean: "true or false",
  bigint: "an integer",
  Object: "an object",
  Array: "an array",
};

const BOUNDS: ReadonlyArray<readonly [string, string]> = [
  [">=", "at least "],
  ["<=", "at most "],
  [">", "more than "],
  ["<", "less than "],
  ["!", "other than "],
];

/** `(string | number)` -> `a string or a number`; `>=1` -> `at least 1`. */
function _expected(expected: string): string {
  const inner = expected.startsWith("(") && expected.endsWith(")")
    ? expected.slice(1, -1)
    : expected;
  return inner.split(" | ").map((part) => {
    const bound = BOUNDS.find(([sign]) => part.startsWith(sign));
    if (bound !== undefined) return bound[1] + part.slice(bound[0].length);
    return TYPE_NAMES[part] ?? part;
  }).join(" or ");
}
