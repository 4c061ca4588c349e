// A commit's options (its durability, src/store/store.ts) reach the store through every wrapper
// app.ts may put around it: the deadline guard, the metrics, the spans and the audit export.
import assert from "node:assert/strict";
import { withStoreMetrics } from "../../src/operator/store_metrics.ts";
import { openKvStore } from "../../src/store/kv_store.ts";
import { guardStore } from "../../src/store/store_guard.ts";
import type { CommitOptions, Store } from "../../src/store/store.ts";
import { withStoreSpans } from "../../src/store/traced_store.ts";
import { NO_TRACING } from "../../src/tracing/tracing.ts";
import { withAuditExport } from "../../src/workspace/domain/audit_export.ts";

Deno.test("every store wrapper hands a commit's options on", async () => {
  const kv = await openKvStore(":memory:");
  try {
    const seen: (CommitOptions | undefined)[] = [];
    const recording: Store = {
      ...kv,
      commit(checks, mutations, options) {
        seen.push(options);
        return kv.commit(checks, mutations, options);
      },
    };
    const wrappers: [string, (store: Store) => Store][] = [
      ["guardStore", (store) => guardStore(store, { deadlineMs: 1_000, probe: () => kv.get([]) })],
      ["withStoreMetrics", (store) => withStoreMetrics(store, () => {})],
      ["withStoreSpans", (store) => withStoreSpans(store, "kv", NO_TRACING)],
      ["withAuditExport", (store) => withAuditExport(store, NO_TRACING)],
    ];
    for (const [name, wrap] of wrappers) {
      seen.length = 0;
      const committed = await wrap(recording).commit(
        [],
        [{ type: "set", key: ["k"], value: name }],
        {
          durability: "deferred",
        },
      );
      assert.equal(committed, true, name);
      assert.deepEqual(seen, [{ durability: "deferred" }], name);
    }
  } finally {
    kv.close();
  }
});
