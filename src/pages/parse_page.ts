/** Parses a page document and names the JSON path of the first problem, for start-up errors. */
import * as v from "valibot";
import { type Block, type PageDocument, PageDocumentSchema } from "./page_document.ts";

export class PageDocumentError extends Error {
  override name = "PageDocumentError";
  readonly path: string;
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** JSON text -> PageDocument, or PageDocumentError naming where and why. */
export function parsePageDocument(text: string): PageDocument {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PageDocumentError("$", `not valid JSON (${(error as SyntaxError).message})`);
  }
  const result = v.safeParse(PageDocumentSchema, json);
  if (!result.success) {
    const issue = _mostSpecific(result.issues[0]);
    throw new PageDocumentError(jsonPath(issue.path), issue.message);
  }
  const document = result.output;
  if (document.url !== document.links.html) {
    throw new PageDocumentError("$.url", "must equal links.html (the page's HTML address)");
  }
  const seen = new Set<string>();
  for (const [path, id] of _headingIds(document.content, "$.content")) {
    if (seen.has(id)) throw new PageDocumentError(`${path}.id`, `duplicate heading id "${id}"`);
    seen.add(id);
  }
  return document;
}

type Issue = v.BaseIssue<unknown>;

/** A union issue wraps the issues of each option; the one that got deepest explains best. */
function _mostSpecific(issue: Issue): Issue {
  let best = issue;
  for (const inner of issue.issues ?? []) {
    const candidate = _mostSpecific(inner);
    if ((candidate.path?.length ?? 0) > (best.path?.length ?? 0)) best = candidate;
  }
  return best;
}

/** `[{key:"content"},{key:3},{key:"level"}]` -> `$.content[3].level`. */
export function jsonPath(path: Issue["path"]): string {
  let out = "$";
  for (const item of path ?? []) {
    const key = item.key;
    out += typeof key === "number"
      ? `[${key}]`
      : typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)
      ? `.${key}`
      : `[${JSON.stringify(key)}]`;
  }
  return out;
}

function* _headingIds(blocks: readonly Block[], at: string): Generator<[string, string]> {
  for (const [i, block] of blocks.entries()) {
    if (block.type === "heading" && block.id !== undefined) yield [`${at}[${i}]`, block.id];
    if (block.type === "example") yield* _headingIds(block.content, `${at}[${i}].content`);
  }
}
