/**
 * Random tokens and their digests. Tokens leave the server once (in a link, a cookie or a
 * hidden field); the store keeps only their SHA-256, so a copy of the store opens nothing.
 */
const encoder = new TextEncoder();

/** 256 random bits, base64url without padding. */
export function randomToken(): string {
  return _base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** Hex SHA-256 of a token: the key under which its record is stored. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
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
  return _base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

/** Compares without an early exit, so the time taken says nothing about where strings differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

function _base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}
