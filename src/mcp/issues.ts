// valibot issues as one line a client can act on: each bad field named by its path.
import * as v from "valibot";

/** `"clientInfo.name": Invalid type: Expected string but received 5; …` */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const seen = new Set<string>();
  for (const issue of issues) {
    const path = v.getDotPath(issue);
    seen.add(path === null ? issue.message : `"${path}": ${issue.message}`);
  }
  return [...seen].join("; ");
}
