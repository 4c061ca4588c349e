import { BoundedMap } from "../bounded_map.ts";

/** Whether a request may proceed, and if not, when to come back. */
export type RateDecision = { readonly allowed: true } | {
  readonly allowed: false;
  readonly retryAfterSeconds: number;
};

export interface RateLimitOptions {
  /** Tokens added per minute. */
  readonly perMinute: number;
  /** Bucket size: the largest burst. */
  readonly burst: number;
  /** Most keys tracked at once; the least recently used are forgotten past it. */
  readonly maxKeys?: number;
  readonly now?: () => number;
}

export interface RateLimiter {
  /** Spends one token of `key` if it has one. */
  take(key: string): RateDecision;
  /** What `take` would decide, spending nothing. */
  check(key: string): RateDecision;
  /**
   * Spends one token of `key` whether or not it has one, for a request let in by `check`
   * that turned out to count. Requests let in together may overdraw the bucket (down to
   * minus one burst); the debt is paid back before `key` is allowed again.
   */
  charge(key: string): void;
}

/** A token bucket as it stands at `at` (epoch milliseconds). */
export interface Bucket {
  readonly tokens: number;
  readonly at: number;
}

/**
 * `bucket` (null: never used, so full) refilled at `perMs` tokens a millisecond up to `burst`,
 * as at time `t`. Time never runs backwards here: another process's clock may be slightly ahead.
 */
export function refill(bucket: Bucket | null, t: number, perMs: number, burst: number): Bucket {
  if (bucket === null) return { tokens: burst, at: t };
  const elapsed = Math.max(0, t - bucket.at);
  return { tokens: Math.min(burst, bucket.tokens + elapsed * perMs), at: Math.max(t, bucket.at) };
}

/**
 * One whole token. Fractional rates (5 per 15 minutes) leave float dust: 4.999… tokens is 5,
 * and the wait for a token is 180.00000000000003 s, which is 180, not 181.
 */
const WHOLE = 1 - 1e-9;

/** Every allowed decision: one object, as it carries nothing else. */
const ALLOWED: RateDecision = Object.freeze({ allowed: true });

/** Allowed with one whole token, else the wait until the bucket holds one, in whole seconds. */
export function decide(tokens: number, perMs: number): RateDecision {
  return tokens >= WHOLE ? ALLOWED : {
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil((WHOLE - tokens) / perMs / 1000)),
  };
}

/**
 * A token bucket per key, in this process. Memory is bounded: every use rewrites the key's
 * bucket, so the least recently used are forgotten first, and a forgotten key comes back with a
 * full bucket, which only errs toward allowing.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { perMinute, burst, maxKeys = 10_000, now = Date.now } = options;
  const perMs = perMinute / 60_000;
  const buckets = new BoundedMap<string, Bucket>(maxKeys);
  // Every use writes the key's bucket back once, refilled up to now (less the token spent), as
  // the most recently used.
  const refilled = (key: string) => refill(buckets.get(key) ?? null, now(), perMs, burst);
  const spent = (bucket: Bucket, floor: number): Bucket => ({
    tokens: Math.max(floor, bucket.tokens - 1),
    at: bucket.at,
  });
  return {
    take(key) {
      const bucket = refilled(key);
      const decision = decide(bucket.tokens, perMs);
      buckets.set(key, decision.allowed ? spent(bucket, 0) : bucket);
      return decision;
    },
    check(key) {
      const bucket = refilled(key);
      buckets.set(key, bucket);
      return decide(bucket.tokens, perMs);
    },
    charge(key) {
      buckets.set(key, spent(refilled(key), -burst));
    },
  };
}

/** For benchmarks (VESTIBULE_RATE_LIMITS=off). */
export const UNLIMITED: RateLimiter = Object.freeze({
  take: () => ({ allowed: true as const }),
  check: () => ({ allowed: true as const }),
  charge: () => {},
});
