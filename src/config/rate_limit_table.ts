// The rate limits, their defaults (DESIGN.md), and VESTIBULE_RATE_LIMITS' overrides.
import * as v from "valibot";
import { SwitchSchema } from "./values.ts";

export const RATE_LIMIT_NAMES = [
  "onboarding",
  "registration",
  "token",
  "token-failure",
  "mail",
  "mail-address",
  "workspace",
  "workspace-verify",
  "cimd",
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

export interface RateLimit {
  /** Tokens added per minute. */
  readonly perMinute: number;
  /** Bucket size: the largest burst. */
  readonly burst: number;
}

export type RateLimits = Readonly<Record<RateLimitName, RateLimit>>;

/** DESIGN.md's defaults; each can be overridden in VESTIBULE_RATE_LIMITS. */
export const DEFAULT_RATE_LIMITS: RateLimits = Object.freeze({
  /** Onboarding MCP, per client address. */
  "onboarding": { perMinute: 300, burst: 100 },
  /** Dynamic client registration, per client address. */
  "registration": { perMinute: 20, burst: 20 },
  /** Token and revocation requests a client proved are its own, per client. */
  "token": { perMinute: 120, burst: 120 },
  /** Token and revocation requests that failed before that proof, per client address. */
  "token-failure": { perMinute: 60, burst: 60 },
  /** Sign-in and sign-up mail, per e-mail address: 5 per 15 minutes. */
  "mail": { perMinute: 5 / 15, burst: 5 },
  /** Sign-in and sign-up mail, per client address: 30 per 15 minutes. */
  "mail-address": { perMinute: 30 / 15, burst: 30 },
  /** Workspace MCP, per token subject and client. */
  "workspace": { perMinute: 600, burst: 120 },
  /** Signature checks of tokens not seen in the last second, per client address. */
  "workspace-verify": { perMinute: 600, burst: 200 },
  /** Client ID Metadata Document fetches, per origin. */
  "cimd": { perMinute: 10, burst: 5 },
});

/**
 * `on`/`off` (and the other switch spellings), or overrides of single limits on top of the
 * defaults: `NAME=COUNT[/MINUTES][:BURST]`, comma-separated (`token=60,mail=10/15`).
 * Returns the limits, null for off, or the error message.
 */
export function parseRateLimits(value: string): RateLimits | null | string {
  const syntax = "must be on, off, or NAME=COUNT[/MINUTES][:BURST],…";
  const switched = v.safeParse(SwitchSchema, value);
  if (switched.success) return switched.output ? DEFAULT_RATE_LIMITS : null;
  const limits: Record<string, RateLimit> = { ...DEFAULT_RATE_LIMITS };
  for (const part of value.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const match = part.match(/^([a-z-]+)=(\d+(?:\.\d+)?)(?:\/(\d+))?(?::(\d+))?$/);
    if (!match) return syntax;
    const [, name, count, minutes, burst] = match;
    if (!(RATE_LIMIT_NAMES as readonly string[]).includes(name!)) {
      return `names a rate limit other than ${RATE_LIMIT_NAMES.join(", ")}`;
    }
    const limit = {
      perMinute: Number(count) / Number(minutes ?? 1),
      burst: Number(burst ?? count),
    };
    if (!(limit.perMinute > 0 && limit.burst >= 1)) {
      return "every rate must be above 0 with a burst of at least 1";
    }
    limits[name!] = limit;
  }
  return Object.freeze(limits as Record<RateLimitName, RateLimit>);
}
