// The audit log's group commit: entries appended in the same turn (the upstream calls' entries
// handed over together, src/gateway/call_audit.ts) share one commit, and so do those appended
// while a commit is under way; each append resolves once its own entry is stored.
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { auditEntry } from "../fixtures.ts";

/** The store, with the number of writes of each commit made through it. */
function countingCommits(store: Store): { store: Store; commits: number[] } {
  const commits: number[] = [];
  return {
    commits,
    store: {
      ...store,
      commit(checks, mutations) {
        commits.push(mutations.length);
        return store.commit(checks, mutations);
      },
    },
  };
}

Deno.test("entries appended in one turn share one commit", async () => {
  const kv = await openKvStore(":memory:");
  try {
    const { store, commits } = countingCommits(kv);
    const audit = createAuditLog(store, Date.now);
    await Promise.all(
      ["t0", "t1", "t2", "t3", "t4"].map((action) => audit.append(auditEntry(action))),
    );
    assert.deepEqual(commits, [5]);
    const listed = await audit.list("b");
    assert.deepEqual(listed.map((e) => e.action).sort(), ["t0", "t1", "t2", "t3", "t4"]);
  } finally {
    kv.close();
  }
});

Deno.test("entries appended while a commit is under way go together in the next", async () => {
  const kv = await openKvStore(":memory:");
  try {
    const { store, commits } = countingCommits(kv);
    const audit = createAuditLog(store, Date.now);
    const first = audit.append(auditEntry("t0"));
    await Promise.resolve(); // the first commit is under way
    const later = ["t1", "t2", "t3"].map((action) => audit.append(auditEntry(action)));
    await Promise.all([first, ...later]);
    assert.deepEqual(commits, [1, 3]);
  } finally {
    kv.close();
  }
});
