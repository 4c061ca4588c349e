// Upstream calls' audit entries written behind the answers, with a bound: past it, a call's
// answer waits for its own entry (back-pressure), and no entry is ever dropped.
import assert from "node:assert/strict";
import { createCallAudit } from "../../src/gateway/call_audit.ts";
import type { NewAuditEntry, RefusedEntry } from "../../src/workspace/domain/audit.ts";
import { auditEntry } from "../workspace/fixtures.ts";

/**
 * A store whose writes finish only when the test says, one entry at a time; what is handed over
 * together resolves once its last entry is stored.
 */
function slowStore() {
  const waiting: { action: string; done: () => void }[] = [];
  const stored: string[] = [];
  return {
    stored,
    waiting,
    appendAll: (entries: readonly NewAuditEntry[]) =>
      new Promise<readonly RefusedEntry[]>((resolve) => {
        let left = entries.length;
        for (const fields of entries) {
          waiting.push({
            action: fields.action,
            done: () => {
              stored.push(fields.action);
              if (--left === 0) resolve([]);
            },
          });
        }
      }),
    storeNext() {
      waiting.shift()!.done();
    },
  };
}

/** Whether the promise settled by now (after the batch's timer of 0 ms, queued before). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

Deno.test("entries within the bound do not hold up the answers", async () => {
  const store = slowStore();
  const audit = createCallAudit({
    appendAll: store.appendAll,
    log: () => {},
    maxUnstored: 3,
    flushMs: 0,
  });
  for (let i = 0; i < 3; i++) assert.ok(await settled(audit.record(auditEntry(`t${i}`))));
  assert.equal(store.waiting.length, 3);
});

Deno.test("past the bound a call waits for its own entry to be stored, and none is dropped", async () => {
  const store = slowStore();
  const audit = createCallAudit({
    appendAll: store.appendAll,
    log: () => {},
    maxUnstored: 2,
    flushMs: 0,
  });
  await audit.record(auditEntry("t0"));
  await audit.record(auditEntry("t1"));
  const third = audit.record(auditEntry("t2"));
  assert.equal(await settled(third), false, "the third answer waits");
  store.storeNext();
  store.storeNext();
  assert.equal(await settled(third), false, "until its own entry is stored");
  store.storeNext();
  assert.ok(await settled(third));
  assert.deepEqual(store.stored, ["t0", "t1", "t2"]);
});

Deno.test("entries of the same moment are handed over together, after the wait", async () => {
  const store = slowStore();
  const audit = createCallAudit({ appendAll: store.appendAll, log: () => {}, flushMs: 60_000 });
  await audit.record(auditEntry("t0"));
  await audit.record(auditEntry("t1"));
  assert.equal(store.waiting.length, 0, "gathered, not yet handed over");
  const settling = audit.settle();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(store.waiting.map((w) => w.action), ["t0", "t1"], "settle hands them over");
  store.storeNext();
  store.storeNext();
  await settling;
  assert.deepEqual(store.stored, ["t0", "t1"]);
});

Deno.test("settle waits for every entry; one the store refuses is logged whole", async () => {
  const lines: string[] = [];
  let refuse!: (error: Error) => void;
  const audit = createCallAudit({
    appendAll: (entries) =>
      new Promise((resolve) =>
        refuse = (error) => resolve(entries.map((entry) => ({ entry, error })))
      ),
    log: (line) => lines.push(line),
  });
  await audit.record(auditEntry("broken"));
  const settling = audit.settle();
  assert.equal(await settled(settling), false);
  refuse(new Error("disk full"));
  await settling;
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /audit entry of an upstream call not stored/);
  assert.match(lines[0]!, /"action":"broken"/);
});
