// The audit log's group commit: entries appended in the same turn (the upstream calls' entries
// handed over together, src/gateway/call_audit.ts) share one commit, and so do those appended
// while a commit is under way; each append resolves once its own entry is stored. A shared commit
// is deferred (src/store/store.ts Durability) only when every entry in it may be.
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Durability, Store } from "../../../src/store/store.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { auditEntry } from "../fixtures.ts";

/** The store, with the number of writes (and the durability) of each commit made through it. */
function countingCommits(
  store: Store,
): { store: Store; commits: number[]; durabilities: (Durability | undefined)[] } {
  const commits: number[] = [];
  const durabilities: (Durability | undefined)[] = [];
  return {
    commits,
    durabilities,
    store: {
      ...store,
      commit(checks, mutations, options) {
        commits.push(mutations.length);
        durabilities.push(options?.durability);
        return store.commit(checks, mutations, options);
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

Deno.test("a shared commit is deferred only when every entry in it may be", async () => {
  const kv = await openKvStore(":memory:");
  try {
    const { store, commits, durabilities } = countingCommits(kv);
    // One moment for all: t0 and t1 pack only when stamped in the same millisecond, which a
    // running clock does not promise (it ticked between them on a busy machine).
    const audit = createAuditLog(store, () => 1_000);
    await Promise.all(["t0", "t1"].map((action) => audit.append(auditEntry(action), "deferred")));
    await Promise.all([
      audit.append(auditEntry("t2"), "deferred"),
      audit.append(auditEntry("t3")),
    ]);
    await audit.append(auditEntry("t4"));
    // t0 and t1 are one pack (audit_pack_test.ts): one write.
    assert.deepEqual(commits, [1, 2, 1]);
    assert.deepEqual(durabilities, ["deferred", "synced", "synced"]);
  } finally {
    kv.close();
  }
});

Deno.test("appendAll never rejects: it names the entries the store refused, and append throws", async () => {
  const kv = await openKvStore(":memory:");
  try {
    const full = new Error("disk full");
    let refuse = true;
    const store: Store = {
      ...kv,
      commit: (checks, mutations, options) =>
        refuse ? Promise.reject(full) : kv.commit(checks, mutations, options),
    };
    const audit = createAuditLog(store, () => 1_000);
    const refused = await audit.appendAll([auditEntry("t0"), auditEntry("t1")], "deferred");
    assert.deepEqual(refused.map(({ entry, error }) => [entry.action, error]), [
      ["t0", full],
      ["t1", full],
    ]);
    await assert.rejects(audit.append(auditEntry("t2")), (error) => error === full);
    refuse = false;
    assert.deepEqual(await audit.appendAll([auditEntry("t3"), auditEntry("t4")]), []);
    assert.deepEqual(await audit.appendAll([]), []);
    assert.deepEqual((await audit.list("b")).map((e) => e.action).sort(), ["t3", "t4"]);
  } finally {
    kv.close();
  }
});
