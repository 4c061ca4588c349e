import { BoundedMap } from "../bounded_map.ts";
import type { RateLimitName, RateLimits } from "../config.ts";

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

/**
 * A token bucket per key. Memory is bounded: every use rewrites the key's bucket, so the
 * least recently used are forgotten first, and a forgotten key comes back with a full
 * bucket, which only errs toward allowing.
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { perMinute, burst, maxKeys = 10_000, now = Date.now } = options;
  const perMs = perMinute / 60_000;
  const buckets = new BoundedMap<string, { tokens: number; at: number }>(maxKeys);
  // The bucket of `key`, refilled up to now and written back as the most recently used.
  const refilled = (key: string) => {
    const t = now();
    const bucket = buckets.get(key) ?? { tokens: burst, at: t };
    bucket.tokens = Math.min(burst, bucket.tokens + (t - bucket.at) * perMs);
    bucket.at = t;
    buckets.set(key, bucket);
    return bucket;
  };
  const decide = (tokens: number): RateDecision =>
    // Fractional rates (5 per 15 minutes) leave float dust: 4.999… tokens is 5.
    tokens >= 1 - 1e-9
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
  return {
    take(key) {
      const bucket = refilled(key);
      const decision = decide(bucket.tokens);
      if (decision.allowed) bucket.tokens = Math.max(0, bucket.tokens - 1);
      return decision;
    },
    check(key) {
      return decide(refilled(key).tokens);
    },
    charge(key) {
      const bucket = refilled(key);
      bucket.tokens = Math.max(-burst, bucket.tokens - 1);
    },
  };
}

/** The limiter configured under `name`, or UNLIMITED when rate limits are off. */
export function configuredRateLimiter(
  limits: RateLimits | null,
  name: RateLimitName,
  now: () => number,
): RateLimiter {
  return limits ? createRateLimiter({ ...limits[name], now }) : UNLIMITED;
}

/** For benchmarks (VESTIBULE_RATE_LIMITS=off). */
export const UNLIMITED: RateLimiter = Object.freeze({
  take: () => ({ allowed: true as const }),
  check: () => ({ allowed: true as const }),
  charge: () => {},
});
