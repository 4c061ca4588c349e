/**
 * Random secrets, their hashes, HMAC tags, and the small symmetric box the refresh window
 * needs. Secrets, codes, links, session ids and tokens leave the server once; the store keeps
 * only their SHA-256 (they carry 256 bits of entropy, so an unsalted hash is not guessable).
 */
const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const padded = text.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(padded + "=".repeat((4 - padded.length % 4) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** A fresh secret of `bytes` random bytes, base64url without padding. */
export function randomSecret(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export async function sha256(text: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** The storage key of a secret: base64url(SHA-256(secret)). */
export async function hashSecret(secret: string): Promise<string> {
  return base64url(await sha256(secret));
}

/** HMAC-SHA256 of `message` under `secret`, base64url. */
export async function hmacToken(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

export interface SealedBox {
  readonly iv: string;
  readonly data: string;
}

/** AES-256-GCM key derived with HKDF from a secret the server never stores. */
async function _boxKey(secret: string, purpose: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, [
    "deriveKey",
  ]);
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(purpose) },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Encrypts `plaintext` so that only a holder of `secret` can read it back. */
export async function seal(secret: string, purpose: string, plaintext: string): Promise<SealedBox> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const key = await _boxKey(secret, purpose);
  const data = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(plaintext));
  return { iv: base64url(iv), data: base64url(new Uint8Array(data)) };
}

/** The plaintext, or null when the secret or the box is wrong. */
export async function open(
  secret: string,
  purpose: string,
  box: SealedBox,
): Promise<string | null> {
  try {
    const key = await _boxKey(secret, purpose);
    const data = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64url(box.iv) },
      key,
      fromBase64url(box.data),
    );
    return new TextDecoder().decode(data);
  } catch {
    return null;
  }
}
