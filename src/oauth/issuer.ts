import type { Config } from "../config/config.ts";

/** The one issuer string (DESIGN.md): metadata, redirects (RFC 9207) and every token. */
export function issuerOf(config: Pick<Config, "authUrl">): string {
  return `${config.authUrl}${ISSUER_PATH}`;
}

export const ISSUER_PATH = "/api/auth";

/** Endpoint paths on {auth_url}. */
export const OAUTH_PATHS = Object.freeze({
  authorize: `${ISSUER_PATH}/oauth2/authorize`,
  consent: `${ISSUER_PATH}/oauth2/consent`,
  token: `${ISSUER_PATH}/oauth2/token`,
  register: `${ISSUER_PATH}/oauth2/register`,
  revoke: `${ISSUER_PATH}/oauth2/revoke`,
  jwks: `${ISSUER_PATH}/jwks`,
});

/** Lifetimes, in milliseconds. */
export const LIFETIMES = Object.freeze({
  accessToken: 60 * 60 * 1000,
  code: 60 * 1000,
  /** How long a used code is remembered so that a replay can revoke what it issued. */
  usedCode: 15 * 60 * 1000,
  /** A grant without offline_access. */
  session: 24 * 60 * 60 * 1000,
  offlineIdle: 30 * 24 * 60 * 60 * 1000,
  offlineTotal: 90 * 24 * 60 * 60 * 1000,
  /** The previous refresh token still gets the identical answer this long after rotation. */
  refreshRetryWindow: 30 * 1000,
  /**
   * A resource's step-up demand turns the grant's next refresh into a way back to the person
   * (step_up.ts); clients refresh at once after the 403, so a minute is ample.
   */
  stepUp: 60 * 1000,
  /** Between the authorization request and the consent decision. */
  transaction: 15 * 60 * 1000,
  /** A dynamically registered client that never obtains a code is forgotten after this. */
  unusedRegistration: 24 * 60 * 60 * 1000,
});
