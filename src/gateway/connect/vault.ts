/**
 * Upstream tokens at rest: each person's access and refresh tokens are sealed with AES-256-GCM
 * under a key from the owner-only file VESTIBULE_UPSTREAM_KEY_FILE, never stored in clear.
 *
 * The file holds one key per line: 32 random bytes in base64url (43 characters; standard base64
 * is accepted too), as `deno task admin upstream-key` prints them; blank lines and lines starting
 * with `#` are ignored. The first key seals, every key opens. Rotation: put a new key on the
 * first line, restart, re-seal every stored token with it, then remove the old line.
 */
import { PrivateFileError, refuseOpenFile } from "../../private_files.ts";
import { base64url, fromBase64url, randomSecret, sha256 } from "../../secrets.ts";
import type { UpstreamsConfig } from "../../config/upstreams.ts";
import { StartupError } from "../../startup_error.ts";
import { runtime } from "../../runtime/current.ts";

export interface Sealed {
  /** The id of the key that sealed it: a fingerprint, not the key. */
  readonly k: string;
  readonly iv: string;
  readonly data: string;
}

export interface TokenVault {
  /** Encrypts under the current key; `context` is bound as AES-GCM additional data (a record's identity), so a box moved to another record does not open. */
  seal(context: string, plaintext: string): Promise<Sealed>;
  /** The plaintext; throws VaultError (plain words, no secrets) when no key of the file opens it. */
  open(context: string, sealed: Sealed): Promise<string>;
  /** Whether `sealed` was made under an older key (rotation re-seals it). */
  stale(sealed: Sealed): boolean;
}

/** A sealed token that does not open: its key is gone, or the box was altered or moved. */
export class VaultError extends Error {
  override name = "VaultError";
}

/** A key file start-up cannot use, in one line naming the variable; never shows a key. */
export class VaultKeyFileError extends StartupError {
  override name = "VaultKeyFileError";
}

const SETTING = "VESTIBULE_UPSTREAM_KEY_FILE";
const KEY_BYTES = 32;
/** 32 bytes: 43 characters of base64url, or of standard base64 with its one `=`. */
const KEY_LINE = /^(?:[A-Za-z0-9_-]{43}|[A-Za-z0-9+/]{43}=?)$/;
/** Keeps the key id apart from any other hash of the same key. */
const KEY_ID_LABEL = "vestibule upstream token key id\n";
const encoder = new TextEncoder();

/** A new key line for the key file. */
export function newVaultKey(): string {
  return randomSecret(KEY_BYTES);
}

/** The vault of the key file at `path`; throws VaultKeyFileError in one line. */
export async function loadVault(path: string): Promise<TokenVault> {
  const fail = (why: string) => new VaultKeyFileError(`${SETTING}=${JSON.stringify(path)}: ${why}`);
  let text: string;
  try {
    // Whoever reads the key reads every person's upstream tokens: owner-only, like the store.
    await refuseOpenFile(path);
    text = await runtime.readTextFile(path);
  } catch (error) {
    if (error instanceof PrivateFileError) throw fail(error.message);
    if (runtime.isNotFound(error)) {
      throw fail("does not exist; make a key with: deno task admin upstream-key");
    }
    if (runtime.isNotPermitted(error)) {
      throw fail("this process may not read it (deno task start reads only under ./data)");
    }
    throw fail(`cannot read it: ${(error as Error).message}`);
  }
  const keys: { line: number; id: string; key: CryptoKey }[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (!KEY_LINE.test(line)) {
      throw fail(
        `line ${index + 1} is not a key: each key is 32 random bytes in base64url ` +
          "(43 characters); make one with: deno task admin upstream-key",
      );
    }
    const bytes = fromBase64url(line);
    const id = await _keyId(bytes);
    const same = keys.find((key) => key.id === id);
    if (same) throw fail(`lines ${same.line} and ${index + 1} hold the same key`);
    const key = await crypto.subtle.importKey("raw", bytes, "AES-GCM", false, [
      "encrypt",
      "decrypt",
    ]);
    keys.push({ line: index + 1, id, key });
  }
  const current = keys[0];
  if (current === undefined) {
    throw fail("holds no key; make one with: deno task admin upstream-key");
  }
  return _vault(current, new Map(keys.map(({ id, key }) => [id, key])));
}

/** The first 8 bytes of a labelled SHA-256 of the key: names it without giving it away. */
async function _keyId(bytes: Uint8Array): Promise<string> {
  return base64url((await sha256(KEY_ID_LABEL + base64url(bytes))).slice(0, 8));
}

function _vault(
  current: { id: string; key: CryptoKey },
  keys: ReadonlyMap<string, CryptoKey>,
): TokenVault {
  return Object.freeze({
    async seal(context: string, plaintext: string): Promise<Sealed> {
      // A fresh 96-bit IV per box (NIST SP 800-38D §8.2.2); GCM must never reuse one under a key.
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const data = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
        current.key,
        encoder.encode(plaintext),
      );
      return { k: current.id, iv: base64url(iv), data: base64url(new Uint8Array(data)) };
    },
    async open(context: string, sealed: Sealed): Promise<string> {
      const key = keys.get(sealed.k);
      if (key === undefined) {
        throw new VaultError(
          `the token was sealed under key ${sealed.k}, which ${SETTING} no longer holds`,
        );
      }
      try {
        const data = await crypto.subtle.decrypt(
          {
            name: "AES-GCM",
            iv: fromBase64url(sealed.iv),
            additionalData: encoder.encode(context),
          },
          key,
          fromBase64url(sealed.data),
        );
        return new TextDecoder().decode(data);
      } catch {
        throw new VaultError(
          `the token does not open under key ${sealed.k}: it was altered, or it belongs to ` +
            "another record",
        );
      }
    },
    stale(sealed: Sealed): boolean {
      return sealed.k !== current.id;
    },
  });
}

/**
 * Why start-up refuses the configuration for want of a key file (one line), or null: an
 * `"auth": "person"` upstream needs somewhere to keep people's tokens sealed.
 */
export function missingKeyFile(
  upstreams: UpstreamsConfig,
  keyFile: string | null,
): string | null {
  const needs = upstreams.upstreams.find((upstream) => upstream.auth !== null);
  if (needs === undefined || keyFile !== null) return null;
  return `VESTIBULE_UPSTREAM_KEY_FILE is required: upstream "${needs.name}" has "auth": ` +
    '"person", and each person\'s tokens are kept encrypted with its key (make one with ' +
    "deno task admin upstream-key)";
}

/** A box as one URL-safe string (`key id.iv.data`, each base64url), for links and opaque state. */
export function sealedText(sealed: Sealed): string {
  return `${sealed.k}.${sealed.iv}.${sealed.data}`;
}

/** The box of a sealedText, or null when the text cannot be one. */
export function parseSealed(text: string): Sealed | null {
  const parts = text.split(".");
  if (parts.length !== 3 || !parts.every((part) => /^[A-Za-z0-9_-]+$/.test(part))) return null;
  const [k, iv, data] = parts as [string, string, string];
  return { k, iv, data };
}
