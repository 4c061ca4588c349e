// valibot issues as one line a client can act on: each bad field named by its path.
import * as v from "valibot";

/**
 * `"clientInfo.name": Invalid type: Expected string but received 5; …`, each path under
 * `prefix` when the issues are about a part of a message (`"params.clientInfo.name"`).
 */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], prefix?: string): string {
  const seen = new Set<string>();
  for (const issue of issues) {
    const own = v.getDotPath(issue);
    const path = prefix === undefined ? own : own === null ? prefix : `${prefix}.${own}`;
    seen.add(path === null ? issue.message : `"${path}": ${issue.message}`);
  }
  return [...seen].join("; ");
}
