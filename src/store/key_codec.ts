/**
 * Store keys as bytes that sort like Deno KV's keys, so a byte-ordered index (PostgreSQL's bytea)
 * lists a prefix in the order KV does. The encoding is KV's own, the FoundationDB tuple layer's:
 * every string sorts before every number; a string is its UTF-8 bytes, 0x00 escaped as 0x00 0xFF
 * and ended by 0x00; a number is an IEEE 754 double, big-endian, with the sign bit flipped when
 * positive and every bit flipped when negative, so byte order is numeric order.
 */
import type { Key, KeyPart } from "./store.ts";

const STRING = 0x02;
const NUMBER = 0x21;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
/** One double's bytes, reused by every decodeKey (synchronous: never two at once). */
const SCRATCH = new Uint8Array(8);
const SCRATCH_VIEW = new DataView(SCRATCH.buffer);

export function encodeKey(key: Key): Uint8Array {
  const bytes: number[] = [];
  for (const part of key) {
    if (typeof part === "string") {
      bytes.push(STRING);
      for (const byte of encoder.encode(part)) {
        bytes.push(byte);
        if (byte === 0x00) bytes.push(0xff);
      }
      bytes.push(0x00);
    } else {
      const double = new Uint8Array(8);
      new DataView(double.buffer).setFloat64(0, part);
      const negative = (double[0]! & 0x80) !== 0;
      bytes.push(NUMBER);
      for (let i = 0; i < 8; i++) {
        bytes.push(negative ? double[i]! ^ 0xff : i === 0 ? double[i]! ^ 0x80 : double[i]!);
      }
    }
  }
  return Uint8Array.from(bytes);
}

export function decodeKey(bytes: Uint8Array): Key {
  const key: KeyPart[] = [];
  let at = 0;
  while (at < bytes.length) {
    const type = bytes[at++];
    if (type === STRING) {
      // Most strings hold no 0x00: their bytes up to the terminator decode as they are.
      const end = bytes.indexOf(0x00, at);
      if (end !== -1 && bytes[end + 1] !== 0xff) {
        key.push(decoder.decode(bytes.subarray(at, end)));
        at = end + 1;
        continue;
      }
      const utf8: number[] = [];
      for (;;) {
        const byte = bytes[at++];
        if (byte === undefined) throw new Error("stored key: unterminated string");
        if (byte === 0x00) {
          if (bytes[at] !== 0xff) break;
          at++;
        }
        utf8.push(byte);
      }
      key.push(decoder.decode(Uint8Array.from(utf8)));
    } else if (type === NUMBER && at + 8 <= bytes.length) {
      // Copied into a scratch double: the client's bytes may be a Buffer sharing their memory.
      const negative = (bytes[at]! & 0x80) === 0;
      for (let i = 0; i < 8; i++) SCRATCH[i] = negative ? bytes[at + i]! ^ 0xff : bytes[at + i]!;
      if (!negative) SCRATCH[0] = SCRATCH[0]! ^ 0x80;
      key.push(SCRATCH_VIEW.getFloat64(0));
      at += 8;
    } else {
      throw new Error(`stored key: unknown part type ${type}`);
    }
  }
  return key;
}

/**
 * The keys strictly under a prefix, as KV's `list({ prefix })` gives them: from the prefix's
 * bytes followed by 0x00 (below every part's type byte) up to, not including, them followed by
 * 0xff (above every type byte). The prefix itself is not in the range.
 */
export function prefixRange(prefix: Key): { readonly from: Uint8Array; readonly to: Uint8Array } {
  const base = encodeKey(prefix);
  const from = new Uint8Array(base.length + 1);
  from.set(base);
  const to = from.slice();
  to[base.length] = 0xff;
  return { from, to };
}
