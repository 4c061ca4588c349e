import assert from "node:assert/strict";
import { AdminTokenError, readAdminToken } from "../../src/operator/api_token.ts";

const GOOD = "x".repeat(31) + "Z";

Deno.test("admin token file: read once, refused in one line that never shows the token", async (t) => {
  const dir = await Deno.makeTempDir();
  const write = async (name: string, text: string, mode = 0o600) => {
    const path = `${dir}/${name}`;
    await Deno.writeTextFile(path, text, { mode });
    await Deno.chmod(path, mode);
    return path;
  };
  try {
    await t.step("a private file with one long token, its line break dropped", async () => {
      assert.equal(await readAdminToken(await write("ok", `${GOOD}\n`)), GOOD);
    });
    const cases: [string, () => Promise<string>, RegExp][] = [
      ["missing", () => Promise.resolve(`${dir}/missing`), /: cannot read it: /],
      [
        "readable by others",
        () => write("open", GOOD, 0o644),
        /is open to group or others \(mode 0644\); make it owner-only/,
      ],
      [
        "short",
        () => write("short", "a".repeat(31)),
        /the token must be at least 32 characters \(it has 31\)/,
      ],
      ["two lines", () => write("lines", `${GOOD}\n${GOOD}\n`), /RFC 6750 b64token/],
      ["a space", () => write("space", `${GOOD} ${GOOD}`), /RFC 6750 b64token/],
      ["empty", () => write("empty", ""), /RFC 6750 b64token/],
    ];
    for (const [name, path, message] of cases) {
      await t.step(name, async () => {
        const file = await path();
        const error = await readAdminToken(file).then(() => null, (e) => e);
        assert.ok(error instanceof AdminTokenError, String(error));
        assert.match(error.message, new RegExp(`^VESTIBULE_ADMIN_TOKEN_FILE="${file}": `));
        assert.match(error.message, message);
        assert.ok(!error.message.includes(GOOD.slice(0, 20)), "the token is never shown");
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
