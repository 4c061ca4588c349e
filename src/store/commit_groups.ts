/**
 * Writes too many for one commit, cut into commits every store takes (limits.ts: Deno KV's
 * bounds on checks, writes and bytes per commit). Each part's checks and writes stay together.
 */
import { encodeKey } from "./key_codec.ts";
import { recordBytes, STORE_LIMITS } from "./limits.ts";
import type { AtomicCheck, Mutation, Store } from "./store.ts";

export interface CommitPart {
  readonly checks: readonly AtomicCheck[];
  readonly mutations: readonly Mutation[];
}

/** Room each commit keeps for a few small records of its own (an audit entry, a mark). */
const RESERVE = { checks: 4, writes: 8, bytes: 32_768, keyBytes: 2_048 } as const;

/** `parts` in order, grouped into commits that stay within every store's limits. */
export function commitGroups(parts: readonly CommitPart[]): CommitPart[][] {
  const groups: CommitPart[][] = [];
  let group: CommitPart[] = [];
  let used = { checks: 0, writes: 0, bytes: 0, keyBytes: 0 };
  for (const part of parts) {
    const size = _sizeOf(part);
    const fits = used.checks + size.checks <= STORE_LIMITS.commitChecks - RESERVE.checks &&
      used.writes + size.writes <= STORE_LIMITS.commitWrites - RESERVE.writes &&
      used.bytes + size.bytes <= STORE_LIMITS.commitBytes - RESERVE.bytes &&
      used.keyBytes + size.keyBytes <= STORE_LIMITS.commitKeyBytes - RESERVE.keyBytes;
    if (!fits && group.length > 0) {
      groups.push(group);
      group = [];
      used = { checks: 0, writes: 0, bytes: 0, keyBytes: 0 };
    }
    group.push(part);
    used = {
      checks: used.checks + size.checks,
      writes: used.writes + size.writes,
      bytes: used.bytes + size.bytes,
      keyBytes: used.keyBytes + size.keyBytes,
    };
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

function _sizeOf(part: CommitPart) {
  let bytes = 0;
  let keyBytes = 0;
  for (const check of part.checks) keyBytes += encodeKey(check.key).length;
  for (const mutation of part.mutations) {
    const size = mutation.type === "set"
      ? recordBytes(mutation.key, mutation.value)
      : { key: encodeKey(mutation.key).length, value: 0 };
    bytes += size.key + size.value;
    keyBytes += size.key;
  }
  return { checks: part.checks.length, writes: part.mutations.length, bytes, keyBytes };
}

/**
 * Commits `parts` group by group, each commit also checking `also`; stops at the first commit
 * whose checks fail. Returns how many parts were committed.
 */
export async function commitInGroups(
  store: Store,
  parts: readonly CommitPart[],
  also: readonly AtomicCheck[] = [],
): Promise<number> {
  let committed = 0;
  for (const group of commitGroups(parts)) {
    const ok = await store.commit(
      [...also, ...group.flatMap((part) => part.checks)],
      group.flatMap((part) => part.mutations),
    );
    if (!ok) break;
    committed += group.length;
  }
  return committed;
}
