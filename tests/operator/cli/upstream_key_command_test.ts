// `admin upstream-key`: a new key for VESTIBULE_UPSTREAM_KEY_FILE on standard output, alone.
import assert from "node:assert/strict";
import { loadVault } from "../../../src/gateway/connect/vault.ts";
import { withStore } from "./admin_runner.ts";

Deno.test("admin upstream-key prints only a new key, which the key file takes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withStore(async (_store, run) => {
      const first = await run("upstream-key");
      assert.deepEqual([first.code, first.err], [0, ""]);
      assert.match(first.out, /^[A-Za-z0-9_-]{43}$/, "one line, nothing else");
      const second = await run("upstream-key");
      assert.notEqual(second.out, first.out, "a new key each time");

      const path = `${dir}/upstream.key`;
      await Deno.writeTextFile(path, `${second.out}\n${first.out}\n`, { mode: 0o600 });
      const vault = await loadVault(path);
      assert.equal(await vault.open("c", await vault.seal("c", "token")), "token");

      const extra = await run("upstream-key", "--bytes", "16");
      assert.deepEqual(
        [extra.code, extra.out, extra.err],
        [
          2,
          "",
          "vestibule admin upstream-key: unknown argument --bytes (this command takes none)\n" +
          "Usage: upstream-key",
        ],
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
