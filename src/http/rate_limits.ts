/**
 * Every rate limit of the service, as configured: which ones all replicas share through the
 * store and which each process keeps alone (docs/operating.md: Replicas), each refusal reported for the
 * metrics.
 */
import type { RateLimitName, RateLimits } from "../config/rate_limit_table.ts";
import type { Store } from "../store/store.ts";
import {
  createRateLimiter,
  type RateDecision,
  type RateLimiter,
  UNLIMITED,
} from "./rate_limiter.ts";
import {
  createSharedRateLimiter,
  type SharedRateLimiter,
  UNLIMITED_SHARED,
} from "./shared_rate_limiter.ts";

/**
 * The limits that protect people (mail to an address, sign-in from an address, registrations,
 * a client's tokens): a store round trip each, on paths that write the store anyway.
 */
export const SHARED_LIMITS = ["registration", "token", "mail", "mail-address"] as const;
export type SharedLimitName = (typeof SHARED_LIMITS)[number];
/** Flood limits on the hot paths, and the CIMD fetch budget: per process, in memory. */
export type LocalLimitName = Exclude<RateLimitName, SharedLimitName>;

export interface Limiters {
  local(name: LocalLimitName): RateLimiter;
  shared(name: SharedLimitName): SharedRateLimiter;
}

/** `limits` null (VESTIBULE_RATE_LIMITS=off): every limiter allows, at no cost. */
export function createLimiters(deps: {
  readonly limits: RateLimits | null;
  readonly store: Store;
  readonly now: () => number;
  /** Told of each refusal, by limit (the metrics). */
  readonly refused?: ((limit: RateLimitName) => void) | undefined;
}): Limiters {
  const { limits, store, now, refused } = deps;
  return {
    local(name) {
      if (limits === null) return UNLIMITED;
      const limiter = createRateLimiter({ ...limits[name], now });
      if (refused === undefined) return limiter;
      const counted = (decision: RateDecision) => {
        if (!decision.allowed) refused(name);
        return decision;
      };
      return {
        take: (key) => counted(limiter.take(key)),
        check: (key) => counted(limiter.check(key)),
        charge: (key) => limiter.charge(key),
      };
    },
    shared(name) {
      if (limits === null) return UNLIMITED_SHARED;
      const limiter = createSharedRateLimiter({ name, ...limits[name], store, now });
      if (refused === undefined) return limiter;
      return {
        async take(key) {
          const decision = await limiter.take(key);
          if (!decision.allowed) refused(name);
          return decision;
        },
      };
    },
  };
}
