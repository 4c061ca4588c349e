/**
 * `notifications/cancelled` between replicas: a replica that is told to cancel a call it is not
 * running leaves a short-lived record in the store, and the replica running the call reads it.
 * A record counts only for a call that started no later than it was written: a stateless client
 * may use the same request id again, and the record of an old cancel must not end a new call.
 */
import { hashSecret } from "../secrets.ts";
import type { Key, Store } from "../store/store.ts";

/** How often a replica looks for cancels of the forwarded calls it is running. */
export const CANCEL_POLL_MS = 1_000;

/** How long a cancel is kept: past it, the call it named has long answered or been cut off. */
const CANCEL_TTL_MS = 60 * 60 * 1000;

export interface SharedCancels {
  readonly now: () => number;
  readonly pollMs: number;
  /** Tells every replica that the call `key` was cancelled now. */
  publish(key: string): Promise<void>;
  /** Whether the call `key`, running since `since`, was cancelled since then. */
  cancelled(key: string, since: number): Promise<boolean>;
}

/** The call key (caller and request id) is the caller's; its hash bounds the store key. */
const _recordKey = async (key: string): Promise<Key> => ["mcp", "cancel", await hashSecret(key)];

export function createSharedCancels(
  deps: { readonly store: Store; readonly now: () => number },
): SharedCancels {
  const { store, now } = deps;
  return {
    now,
    pollMs: CANCEL_POLL_MS,
    async publish(key) {
      await store.set(await _recordKey(key), { at: now() }, { expireIn: CANCEL_TTL_MS });
    },
    async cancelled(key, since) {
      const entry = await store.get<{ at: number }>(await _recordKey(key));
      return entry !== null && entry.value.at >= since;
    },
  };
}
