/**
 * What the authorization server counts for the operator's metrics (src/operator/service_metrics.ts).
 * Optional in every part's dependencies: without the operator listener nothing is counted.
 */

/** The grants of the token endpoint that issue tokens. */
export const ISSUING_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
export type IssuingGrantType = (typeof ISSUING_GRANT_TYPES)[number];

/**
 * Why a grant ended before its time, in this process: the client revoked it (RFC 7009), the
 * account did on /account, or the server did on a replayed code, a reused refresh token or an
 * account no longer in the business. The admin CLI's revocations happen in its own process.
 */
export const REVOKED_BY = [
  "client",
  "account",
  "code_replay",
  "refresh_reuse",
  "membership_ended",
] as const;
export type RevokedBy = (typeof REVOKED_BY)[number];

export interface OAuthMetrics {
  /** A token response with new tokens (not the repeated answer of a retried refresh). */
  tokensIssued(grantType: IssuingGrantType): void;
  /** A rotated refresh token presented again after the retry window (RFC 9700 §4.14.2). */
  refreshReuse(): void;
  grantRevoked(by: RevokedBy): void;
}
