/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, "Signature scheme"): the
 * secret is `whsec_` and the base64 of 24 to 64 random bytes; a message is signed as
 * `v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the
 * secret's bytes, with the timestamp in whole seconds. Receivers verify it with their own
 * library (npm `standardwebhooks`, or any of the specification's reference libraries).
 */
const encoder = new TextEncoder();

export class WebhookSecretError extends Error {
  override name = "WebhookSecretError";
}

/** The specification's bounds on the secret's length, in bytes. */
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** The HMAC key of a `whsec_…` secret; throws WebhookSecretError naming what is wrong. */
export async function importWebhookSecret(secret: string): Promise<CryptoKey> {
  const encoded = secret.trim();
  if (!encoded.startsWith("whsec_")) {
    throw new WebhookSecretError("must start with whsec_ (a Standard Webhooks secret)");
  }
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.from(atob(encoded.slice("whsec_".length)), (c) => c.charCodeAt(0));
  } catch {
    throw new WebhookSecretError("must be whsec_ followed by base64");
  }
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) {
    throw new WebhookSecretError(
      `must hold ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes (it holds ${bytes.length})`,
    );
  }
  return await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
}

/** The three headers of one delivery attempt of `body`. */
export async function webhookHeaders(
  key: CryptoKey,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const signed = encoder.encode(`${id}.${timestampSeconds}.${body}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": `v1,${btoa(binary)}`,
  };
}
