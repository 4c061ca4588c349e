// An upstream call's audit entry is committed as its answer goes out, not before: shutting the
// service down right after the answer still stores it (the service waits for every entry).
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";
import type { Store } from "../../../src/store/store.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { writeUpstreamsFile } from "../support/gateway_support.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";
import { denoOnly } from "../support/server_runtime.ts";

Deno.test("a call's audit entry is stored even when the service stops right after its answer", {
  ignore: denoOnly("wraps the server's store to slow its writes"),
}, async () => {
  const tiny = startTinyUpstream({});
  const dir = await Deno.makeTempDir();
  const file = await writeUpstreamsFile([{ name: "tiny", title: "Tiny", url: tiny.url }]);
  const opened = await openKvStore(`${dir}/store.kv`, Date.now);
  // Audit commits land a little late, so that the answer is out before the entry is stored.
  const slowAudit = (store: Store): Store =>
    new Proxy(store, {
      get(target, property) {
        if (property !== "commit") return Reflect.get(target, property);
        return async (...args: Parameters<Store["commit"]>) => {
          if (args[1].some((mutation) => mutation.key[0] === "audit")) {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          return await target.commit(...args);
        };
      },
    });
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file }, {
    store: opened,
    wrapStore: slowAudit,
  });
  try {
    const { token } = await ws.token(["app.access", "upstream.tiny"]);
    const { message } = await ws.call(token, "tiny__add", { a: 1, b: 2 });
    assert.deepEqual(message.result.structuredContent, { sum: 3 });
  } finally {
    await ws.close();
    await tiny.close();
    await Deno.remove(file);
  }
  const reopened = await openKvStore(`${dir}/store.kv`, Date.now);
  try {
    const entries = await createAuditLog(reopened, Date.now).list(ws.businessId);
    assert.ok(
      entries.some((entry) => entry.action === "tiny__add" && entry.summary.includes("(ok)")),
      JSON.stringify(entries.map((entry) => entry.summary)),
    );
  } finally {
    reopened.close();
    await Deno.remove(dir, { recursive: true });
  }
});
