// valibot issues as one line a client can act on: each bad field named by its path.
import type * as v from "valibot";
import { describeIssue } from "../issue_words.ts";

/**
 * `"clientInfo.name" must be a string, not 5; …`, each path under `prefix` when the issues
 * are about a part of a message (`"params.clientInfo.name"`).
 */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], prefix?: string): string {
  return [...new Set(issues.map((issue) => describeIssue(issue, prefix)))].join("; ");
}
