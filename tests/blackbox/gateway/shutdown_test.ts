// An upstream call's audit entry is committed as its answer goes out, not before: shutting the
// service down right after the answer still stores it (the service waits for every entry).
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { writeUpstreamsFile } from "../support/gateway_support.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

Deno.test("a call's audit entry is stored even when the service stops right after its answer", async () => {
  const tiny = startTinyUpstream({});
  const dir = await Deno.makeTempDir();
  const file = await writeUpstreamsFile([{ name: "tiny", title: "Tiny", url: tiny.url }]);
  const dataUrl = storeFile(`${dir}/store`);
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file }, {
    dataUrl,
    // Audit commits land a little late, so that the answer is out before the entry is stored.
    storeFault: { operations: ["commit"], key: ["audit"], delayMs: 100 },
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
  const reopened = await openStoreFile(dataUrl);
  try {
    const entries = await createAuditLog(reopened, Date.now).list(ws.businessId);
    assert.ok(
      entries.some((entry) => entry.action === "tiny__add" && entry.summary.includes("(ok)")),
      JSON.stringify(entries.map((entry) => entry.summary)),
    );
  } finally {
    await reopened.close();
    await Deno.remove(dir, { recursive: true });
  }
});
