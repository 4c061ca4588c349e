import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import {
  loadVault,
  newVaultKey,
  type Sealed,
  VaultError,
  VaultKeyFileError,
} from "../../../src/gateway/connect/vault.ts";
import { base64url, fromBase64url } from "../../../src/secrets.ts";

const TOKEN = "upstream-refresh-token-4f9c2a";
const CONTEXT = "connection:biz_1:acc_1:helpdesk";

/** Runs `test` with a helper writing key files (owner-only unless told) in a new directory. */
async function withKeyFiles(
  test: (write: (text: string, mode?: number) => Promise<string>) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  let count = 0;
  try {
    await test(async (text, mode = 0o600) => {
      const path = `${dir}/upstream-${++count}.key`;
      await Deno.writeTextFile(path, text, { mode });
      await Deno.chmod(path, mode);
      return path;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** `sealed` with one byte of its `field` flipped. */
function flipped(sealed: Sealed, field: "iv" | "data"): Sealed {
  const bytes = fromBase64url(sealed[field]);
  bytes[0] = bytes[0]! ^ 1;
  return { ...sealed, [field]: base64url(bytes) };
}

async function openError(promise: Promise<unknown>): Promise<VaultError> {
  const error = await promise.then(() => null, (e) => e);
  assert.ok(error instanceof VaultError, String(error));
  return error;
}

Deno.test("vault: a sealed token opens with its context, and its box never shows it", async () => {
  await withKeyFiles(async (write) => {
    const vault = await loadVault(await write(`${newVaultKey()}\n`));
    const sealed = await vault.seal(CONTEXT, TOKEN);
    assert.deepEqual(Object.keys(sealed), ["k", "iv", "data"]);
    assert.match(sealed.k, /^[A-Za-z0-9_-]{11}$/, "8 bytes of fingerprint");
    assert.equal(fromBase64url(sealed.iv).length, 12, "a 96-bit IV");
    assert.equal(await vault.open(CONTEXT, sealed), TOKEN);
    assert.equal(vault.stale(sealed), false);
    const again = await vault.seal(CONTEXT, TOKEN);
    assert.notEqual(again.iv, sealed.iv, "a fresh IV for every box");
    assert.notEqual(again.data, sealed.data);
    for (const box of [sealed, again]) {
      const json = JSON.stringify(box);
      assert.ok(!json.includes(TOKEN) && !json.includes(btoa(TOKEN).slice(0, 12)), json);
    }
  });
});

Deno.test("vault: a box moved to another record, or altered, does not open", async () => {
  await withKeyFiles(async (write) => {
    const vault = await loadVault(await write(newVaultKey()));
    const sealed = await vault.seal(CONTEXT, TOKEN);
    const refusal = `the token does not open under key ${sealed.k}: it was altered, or it ` +
      "belongs to another record";
    const cases: [string, Sealed, string?][] = [
      ["another context", sealed, "connection:biz_1:acc_2:helpdesk"],
      ["a byte of the ciphertext flipped", flipped(sealed, "data")],
      ["a byte of the IV flipped", flipped(sealed, "iv")],
      ["the tag cut off", { ...sealed, data: sealed.data.slice(0, 8) }],
      ["an IV that is not base64url", { ...sealed, iv: "!!" }],
    ];
    for (const [name, box, context = CONTEXT] of cases) {
      const error = await openError(vault.open(context, box));
      assert.equal(error.message, refusal, name);
    }
  });
});

Deno.test("vault: rotation seals under the first key, opens old boxes until their key is gone", async () => {
  await withKeyFiles(async (write) => {
    const oldKey = newVaultKey();
    const newKey = newVaultKey();
    const before = await loadVault(await write(`${oldKey}\n`));
    const old = await before.seal(CONTEXT, TOKEN);

    const rotating = await loadVault(
      await write(`# new key, since the rotation\n${newKey}\n\n# old key\n${oldKey}\n`),
    );
    assert.equal(await rotating.open(CONTEXT, old), TOKEN, "an old box still opens");
    assert.equal(rotating.stale(old), true, "and is due to be re-sealed");
    const resealed = await rotating.seal(CONTEXT, TOKEN);
    assert.notEqual(resealed.k, old.k, "new boxes name the new key");
    assert.equal(rotating.stale(resealed), false);
    assert.equal(before.stale(resealed), true, "a process on the old file sees it as not its own");

    const after = await loadVault(await write(`${newKey}\n`));
    assert.equal(await after.open(CONTEXT, resealed), TOKEN);
    const error = await openError(after.open(CONTEXT, old));
    assert.equal(
      error.message,
      `the token was sealed under key ${old.k}, which VESTIBULE_UPSTREAM_KEY_FILE no longer holds`,
    );
  });
});

Deno.test("vault: a key line may be standard base64, with CRLF line ends and comments", async () => {
  await withKeyFiles(async (write) => {
    const key = newVaultKey();
    const standard = btoa(String.fromCharCode(...fromBase64url(key)));
    assert.match(standard, /^[A-Za-z0-9+/]{43}=$/);
    const asUrl = await loadVault(await write(`${key}\n`));
    const asStandard = await loadVault(await write(`# the key\r\n\r\n  ${standard}  \r\n`));
    const sealed = await asUrl.seal(CONTEXT, TOKEN);
    assert.equal(await asStandard.open(CONTEXT, sealed), TOKEN, "the same key either way");
    assert.equal(asStandard.stale(sealed), false);
  });
});

Deno.test("vault: a new key is 32 random bytes in base64url, one line of the key file", () => {
  const keys = new Set(Array.from({ length: 20 }, newVaultKey));
  assert.equal(keys.size, 20, "random keys");
  for (const key of keys) {
    assert.match(key, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(fromBase64url(key).length, 32);
  }
});

Deno.test("vault: a key file start-up cannot use is refused in one line that shows no key", async (t) => {
  await withKeyFiles(async (write) => {
    const key = newVaultKey();
    const make = "make one with: deno task admin upstream-key";
    const cases: [string, () => Promise<string>, (path: string) => string][] = [
      [
        "missing",
        () => write("").then((path) => Deno.remove(path).then(() => path)),
        () => "does not exist; make a key with: deno task admin upstream-key",
      ],
      [
        "readable by others",
        () => write(`${key}\n`, 0o644),
        (path) =>
          `${path} is open to group or others (mode 0644); make it owner-only: chmod 600 ${path}`,
      ],
      [
        "readable by the group",
        () => write(`${key}\n`, 0o640),
        (path) =>
          `${path} is open to group or others (mode 0640); make it owner-only: chmod 600 ${path}`,
      ],
      ["empty", () => write(""), () => `holds no key; ${make}`],
      ["only comments", () => write("# no key yet\n\n#\n"), () => `holds no key; ${make}`],
      [
        "a short line",
        () => write(`# keys\n${key}\n${key.slice(1)}\n`),
        () =>
          `line 3 is not a key: each key is 32 random bytes in base64url (43 characters); ${make}`,
      ],
      [
        "a key with a comment after it",
        () => write(`${key} # the first\n`),
        () =>
          `line 1 is not a key: each key is 32 random bytes in base64url (43 characters); ${make}`,
      ],
      [
        "a line of another alphabet",
        () => write(`${key.slice(0, 42)}.\n`),
        () =>
          `line 1 is not a key: each key is 32 random bytes in base64url (43 characters); ${make}`,
      ],
      [
        "the same key twice, once in standard base64",
        () => write(`${key}\n\n${btoa(String.fromCharCode(...fromBase64url(key)))}\n`),
        () => "lines 1 and 3 hold the same key",
      ],
    ];
    for (const [name, file, why] of cases) {
      await t.step(name, async () => {
        const path = await file();
        const error = await loadVault(path).then(() => null, (e) => e);
        assert.ok(error instanceof VaultKeyFileError, String(error));
        assert.equal(error.line, `VESTIBULE_UPSTREAM_KEY_FILE="${path}": ${why(path)}`);
        assert.ok(!error.line.includes("\n"), "one line");
        assert.ok(!error.line.includes(key.slice(0, 16)), "no key material");
      });
    }
  });
});

Deno.test("vault: any text sealed under any context opens under that context only", async () => {
  await withKeyFiles(async (write) => {
    const vault = await loadVault(await write(newVaultKey()));
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "grapheme" }),
        fc.string({ unit: "grapheme" }),
        fc.string({ unit: "grapheme", minLength: 1 }),
        async (context, plaintext, suffix) => {
          const sealed = await vault.seal(context, plaintext);
          assert.equal(await vault.open(context, sealed), plaintext);
          await openError(vault.open(context + suffix, sealed));
        },
      ),
      { numRuns: 200 },
    );
  });
});
