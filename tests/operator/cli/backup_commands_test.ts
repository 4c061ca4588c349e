import { adminRunner } from "./admin_runner.ts";
import assert from "node:assert/strict";
import { openKvStore } from "../../../src/store/kv_store.ts";

Deno.test("export --output writes a new owner-only file and never overwrites one", async () => {
  const dir = await Deno.makeTempDir();
  const store = await openKvStore(":memory:");
  const run = adminRunner(store);
  try {
    await store.set(["oauth", "key", "k1"], { private: "sealed" });
    const path = `${dir}/backup.jsonl`;
    assert.equal((await run("export", "--output", path)).code, 0);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const written = await Deno.readTextFile(path);
    assert.equal(written.split("\n").length, 3, "header, one record, final newline");

    const again = await run("export", "--output", path);
    assert.equal(again.code, 1);
    assert.match(again.err, /cannot write --output .*backup\.jsonl/);
    assert.equal(await Deno.readTextFile(path), written);
  } finally {
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
