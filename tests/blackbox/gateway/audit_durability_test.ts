// An upstream call's audit entry is committed deferred (src/store/store.ts Durability: no disk
// sync of its own on SQLite), an entry of Vestibule's own tools synced, through the service's
// whole store stack (docs/gateway.md "Audit durability").
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Durability, Store } from "../../../src/store/store.ts";
import type { AuditEntry } from "../../../src/workspace/domain/audit.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { writeUpstreamsFile } from "../support/gateway_support.ts";
import { denoOnly } from "../support/server_runtime.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test({
  name: "an upstream call's audit entry is deferred, an own tool's synced",
  ignore: denoOnly("serves a store the test opened, to see each commit's options"),
  async fn() {
    const kv = await openKvStore(":memory:");
    // The action of each audit entry committed, with its commit's durability.
    const audited: [string, Durability][] = [];
    const store: Store = {
      ...kv,
      commit(checks, mutations, options) {
        for (const mutation of mutations) {
          if (mutation.type !== "set" || mutation.key[0] !== "audit") continue;
          audited.push([(mutation.value as AuditEntry).action, options?.durability ?? "synced"]);
        }
        return kv.commit(checks, mutations, options);
      },
    };
    const tiny = startTinyUpstream({});
    const file = await writeUpstreamsFile([{ name: "tiny", title: "Tiny", url: tiny.url }]);
    const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file }, { store });
    try {
      const { token } = await ws.token(["app.access", "upstream.tiny", "agent.sessions"]);
      const { message } = await ws.call(token, "tiny__add", { a: 1, b: 2 });
      assert.deepEqual(message.result.structuredContent, { sum: 3 });
      const own = await ws.call(token, "create_conversation", { title: "Plans" });
      assert.equal(own.message.result.isError, undefined, JSON.stringify(own.message));
    } finally {
      await ws.close(); // waits for every upstream call's entry
      await tiny.close();
      await Deno.remove(file);
    }
    // Pinning the upstream's definitions is Vestibule's own change: synced too.
    assert.deepEqual(audited.toSorted(), [
      ["create_conversation", "synced"],
      ["pin_upstream_tools", "synced"],
      ["tiny__add", "deferred"],
    ]);
  },
});
