import assert from "node:assert/strict";
import { ensurePrivateFile, PrivateFileError, refuseOpenFile } from "../src/private_files.ts";

const modeOf = async (path: string) => (await Deno.stat(path)).mode! & 0o777;

Deno.test({
  name: "private files: created owner-only, kept as they are, refused when open to others",
  ignore: Deno.build.os === "windows",
  async fn() {
    const dir = await Deno.makeTempDir();
    const path = `${dir}/a/b/secret`;
    try {
      await ensurePrivateFile(path);
      assert.deepEqual(
        [await modeOf(`${dir}/a`), await modeOf(`${dir}/a/b`), await modeOf(path)],
        [0o700, 0o700, 0o600],
      );
      await Deno.writeTextFile(path, "kept");
      await ensurePrivateFile(path);
      assert.equal(await Deno.readTextFile(path), "kept", "neither truncated nor replaced");

      await Deno.chmod(path, 0o640);
      const refusal = new PrivateFileError(
        `${path} is open to group or others (mode 0640); make it owner-only: chmod 600 ${path}`,
      );
      await assert.rejects(ensurePrivateFile(path), refusal);
      await assert.rejects(refuseOpenFile(path), refusal);
      await refuseOpenFile(`${dir}/missing`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
