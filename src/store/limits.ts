/**
 * What every store backend accepts, in one place. Deno KV's limits are the narrower ones
 * (docs.deno.com/deploy/kv/manual/transactions, and its own errors: "Key too large for write (max
 * 2048 bytes)", "Value too large (max 65536 bytes)"); PostgreSQL takes more of each (a bytea key
 * in a btree index up to ~2700 bytes, a text value up to 1 GB, any number of rows in one
 * transaction), so what fits KV fits both, and a backup of one loads into the other.
 */
import { serialize } from "node:v8";
import { encodeKey } from "./key_codec.ts";
import type { AtomicCheck, Key, Mutation } from "./store.ts";

export const STORE_LIMITS = {
  /** A key, as KV encodes it (key_codec.ts writes the same bytes). */
  keyBytes: 2048,
  /** A value, as KV serialises what it keeps (kv_store.ts: the value beside its expiry). */
  valueBytes: 65_536,
  /**
   * Arrays and objects inside one another. KV's serialiser recurses and overflows the stack
   * between 1,000 and 5,000 levels; no record of ours nests more than a few.
   */
  depth: 100,
  /** Writes (sets and deletes) in one commit. */
  commitWrites: 1000,
  /** Checks in one commit. */
  commitChecks: 100,
  /** The keys and values of one commit's writes, as KV measures them ("Total mutation size"). */
  commitBytes: 819_200,
  /** The keys of one commit's writes ("Total key size"). */
  commitKeyBytes: 81_920,
} as const;

/** Whether arrays and objects nest in `value` more than `levels` deep; without recursion. */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== "object" || ArrayBuffer.isView(item)) continue;
    if (depth === levels) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** A record's key and its value's size as KV keeps it (beside an expiry, bounded by a double). */
export function recordBytes(key: Key, value: unknown): { key: number; value: number } {
  return {
    key: encodeKey(key).length,
    value: serialize({ v: value, exp: Number.MAX_VALUE }).length,
  };
}

/** Why a store would refuse this record, in words; null when every store takes it. */
export function recordProblem(key: Key, value: unknown): string | null {
  return _measure(key, value).problem;
}

/** A record's problem (as above) and, when it has none, its size as recordBytes gives it. */
function _measure(key: Key, value: unknown): { problem: string | null; bytes: number } {
  const keyBytes = encodeKey(key).length;
  if (keyBytes > STORE_LIMITS.keyBytes) {
    return {
      problem: `the key is ${keyBytes} bytes, more than a store takes (${STORE_LIMITS.keyBytes})`,
      bytes: 0,
    };
  }
  if (nestsDeeperThan(value, STORE_LIMITS.depth)) {
    return {
      problem:
        `the value nests more than ${STORE_LIMITS.depth} levels deep, more than a store takes`,
      bytes: 0,
    };
  }
  const valueBytes = serialize({ v: value, exp: Number.MAX_VALUE }).length;
  if (valueBytes > STORE_LIMITS.valueBytes) {
    return {
      problem: `the value is ${valueBytes} bytes stored, more than a store takes ` +
        `(${STORE_LIMITS.valueBytes})`,
      bytes: 0,
    };
  }
  return { problem: null, bytes: keyBytes + valueBytes };
}

/**
 * Why Deno KV would refuse this commit, in words; null when every store takes it. A store
 * without KV's own bounds (SQLite) asks this first, so that what it holds loads into any store.
 */
export function commitProblem(
  checks: readonly AtomicCheck[],
  mutations: readonly Mutation[],
): string | null {
  if (checks.length > STORE_LIMITS.commitChecks) {
    return `the commit has ${checks.length} checks, more than a store takes ` +
      `(${STORE_LIMITS.commitChecks})`;
  }
  if (mutations.length > STORE_LIMITS.commitWrites) {
    return `the commit has ${mutations.length} writes, more than a store takes ` +
      `(${STORE_LIMITS.commitWrites})`;
  }
  let bytes = 0;
  let keyBytes = 0;
  for (const m of mutations) {
    if (m.type === "set") {
      const { problem, bytes: size } = _measure(m.key, m.value);
      if (problem !== null) return problem;
      bytes += size;
      keyBytes += encodeKey(m.key).length;
    } else {
      const size = encodeKey(m.key).length;
      if (size > STORE_LIMITS.keyBytes) {
        return `the key is ${size} bytes, more than a store takes (${STORE_LIMITS.keyBytes})`;
      }
      bytes += size;
      keyBytes += size;
    }
  }
  if (bytes > STORE_LIMITS.commitBytes) {
    return `the commit's writes are ${bytes} bytes, more than a store takes ` +
      `(${STORE_LIMITS.commitBytes})`;
  }
  if (keyBytes > STORE_LIMITS.commitKeyBytes) {
    return `the commit's keys are ${keyBytes} bytes, more than a store takes ` +
      `(${STORE_LIMITS.commitKeyBytes})`;
  }
  return null;
}
