/**
 * Token buckets kept in the store, so that every process on one store spends the same budget:
 * the limits that protect people (mail per address, registration, sign-in) hold for all
 * replicas together. Each take is one read and one versioned commit, retried when another
 * process changed the bucket in between.
 */
import { hashSecret } from "../secrets.ts";
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import type { Store } from "../store/store.ts";
import { type Bucket, decide, type RateDecision, refill } from "./rate_limiter.ts";

export interface SharedRateLimiter {
  /** Spends one token of `key` if it has one, for every process on the store. */
  take(key: string): Promise<RateDecision>;
}

/** For VESTIBULE_RATE_LIMITS=off: allows, touching nothing. */
export const UNLIMITED_SHARED: SharedRateLimiter = Object.freeze({
  take: () => Promise.resolve({ allowed: true as const }),
});

/** Commits lost to other processes before a take gives up (and refuses for a second). */
const ATTEMPTS = 10;

export function createSharedRateLimiter(options: {
  /** The limit's name: its buckets live under ["rate_limit", name]. */
  readonly name: string;
  readonly perMinute: number;
  readonly burst: number;
  readonly store: Store;
  readonly now: () => number;
}): SharedRateLimiter {
  const { name, burst, store, now } = options;
  const perMs = options.perMinute / 60_000;
  return {
    async take(key) {
      // Keyed by digest: e-mail addresses of strangers are not kept in the clear, and a key's
      // length is bounded.
      const storeKey = ["rate_limit", name, await hashSecret(key)];
      return await retryCommit(async () => {
        const entry = await store.get<Bucket>(storeKey);
        const bucket = refill(entry?.value ?? null, now(), perMs, burst);
        const decision = decide(bucket.tokens, perMs);
        // A refusal writes nothing: the bucket refills from what is stored.
        if (!decision.allowed) return decision;
        const tokens = Math.max(0, bucket.tokens - 1);
        const ok = await store.commit([{ key: storeKey, version: entry?.version ?? null }], [{
          type: "set",
          key: storeKey,
          value: { tokens, at: bucket.at } satisfies Bucket,
          // Gone once full again: a full bucket and no record are the same.
          expireIn: Math.max(1, Math.ceil((burst - tokens) / perMs)),
        }]);
        return ok ? decision : RETRY;
      }, {
        attempts: ATTEMPTS,
        // Every attempt lost to another take of the same key: the key is busy, which is what the
        // limit is for.
        exhausted: (): RateDecision => ({ allowed: false, retryAfterSeconds: 1 }),
      });
    },
  };
}
