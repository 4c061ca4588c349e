/**
 * Verifies access tokens for the resource server ({api_url}) without HTTP: the signing keys
 * and grants live in the shared store.
 */
import { decodeJwt } from "jose/jwt/decode";
import * as errors from "jose/errors";
import { jwtVerify } from "jose/jwt/verify";
import * as v from "valibot";
import { BoundedMap } from "../bounded_map.ts";
import type { Store } from "../store/store.ts";
import { getGrant, touchGrant } from "./grants.ts";
import { type SigningKeys, verificationKey } from "./signing_keys.ts";

export interface AccessTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  business: string;
  client_id: string;
  scope: string;
  gid: string;
  jti: string;
  iat: number;
  exp: number;
}

export type TokenCheck =
  | {
    ok: true;
    claims: AccessTokenClaims;
    /** The client's name as the human saw it at consent, from the grant just checked. */
    clientName: string;
  }
  | { ok: false; description: string };

const ClaimsSchema = v.object({
  iss: v.string(),
  aud: v.string("the audience must be a single string"),
  sub: v.string(),
  business: v.string(),
  client_id: v.string(),
  scope: v.string(),
  gid: v.string(),
  jti: v.string(),
  iat: v.number(),
  exp: v.number(),
});

const MAX_VERIFIED = 10_000;
const MAX_TOUCHED = 10_000;

/** How often (at most) a grant's "last used" time is written by verification. */
const TOUCH_INTERVAL = 60_000;

export interface AccessTokenVerifierDeps {
  readonly keys: SigningKeys;
  readonly store: Store;
  readonly now: () => number;
  /** The one issuer string (issuer.ts). */
  readonly issuer: string;
  /** {api_url}: `aud` must be exactly this string. */
  readonly audience: string;
}

/**
 * Signature (ES256, kid from the store's keys, no HTTP), iss, aud exactly {api_url}, exp,
 * and that the grant `gid` is still active. Membership is NOT checked here (the resource
 * server does).
 */
export function createAccessTokenVerifier(
  deps: AccessTokenVerifierDeps,
): (jwt: string) => Promise<TokenCheck> {
  const { store, now, issuer, audience } = deps;
  const getKey = verificationKey(deps.keys);
  const touched = new BoundedMap<string, number>(MAX_TOUCHED);
  // Tokens whose signature and claims already verified, by their exact text: an agent sends
  // the same token for an hour, and ECDSA verification is the expensive part. Expiry and the
  // grant are still checked on every call.
  const verified = new BoundedMap<string, AccessTokenClaims>(MAX_VERIFIED);
  return async (jwt) => {
    const known = verified.get(jwt);
    if (known) {
      if (known.exp * 1000 <= now()) {
        verified.delete(jwt);
        return { ok: false, description: "The access token has expired" };
      }
      return await _grantCheck(known);
    }
    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(jwt, getKey, {
        algorithms: ["ES256"],
        issuer,
        audience,
        typ: "at+jwt",
        currentDate: new Date(now()),
        requiredClaims: ["exp", "iat", "sub", "jti"],
      }));
    } catch (error) {
      // Only jose's verdicts are about the token; anything else (the key lookup's store outage)
      // is ours, and must not tell the agent to throw a good token away.
      if (!(error instanceof errors.JOSEError)) throw error;
      return { ok: false, description: _describe(error) };
    }
    const parsed = v.safeParse(ClaimsSchema, payload);
    if (!parsed.success) {
      return {
        ok: false,
        description: `The access token is malformed: ${parsed.issues[0].message}`,
      };
    }
    const claims = parsed.output;
    if (claims.aud !== audience) {
      return { ok: false, description: `The access token's audience must be ${audience}` };
    }
    verified.set(jwt, claims);
    return await _grantCheck(claims);
  };

  async function _grantCheck(claims: AccessTokenClaims): Promise<TokenCheck> {
    const grant = await getGrant(store, claims.gid);
    if (
      !grant || grant.accountId !== claims.sub || grant.businessId !== claims.business ||
      grant.clientId !== claims.client_id
    ) {
      return {
        ok: false,
        description: "The grant behind this access token was revoked or has ended",
      };
    }
    const at = now();
    if ((touched.get(claims.gid) ?? 0) + TOUCH_INTERVAL <= at) {
      touched.set(claims.gid, at);
      await touchGrant(store, claims.gid, at);
    }
    return { ok: true, claims, clientName: grant.clientName };
  }
}

/**
 * The grant of an access token this server signed, even an expired one (revocation: revoking
 * with an expired token is harmless), or null for anything else.
 */
export function createAccessTokenGrantReader(
  deps: { readonly keys: SigningKeys; readonly issuer: string },
): (jwt: string) => Promise<string | null> {
  const getKey = verificationKey(deps.keys);
  return async (jwt) => {
    try {
      const { iat } = decodeJwt(jwt);
      const { payload } = await jwtVerify(jwt, getKey, {
        algorithms: ["ES256"],
        issuer: deps.issuer,
        typ: "at+jwt",
        currentDate: new Date((iat ?? 0) * 1000),
      });
      return typeof payload.gid === "string" ? payload.gid : null;
    } catch (error) {
      // A store outage while looking up the key must not pass for "not our token": nothing
      // would be revoked, and the client would be told it was.
      if (!(error instanceof errors.JOSEError)) throw error;
      return null;
    }
  };
}

function _describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "The access token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `The access token's "${error.claim}" claim is not acceptable (${error.reason})`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "The access token's signature does not verify";
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "The access token was not signed by a key of this server";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return "The access token must be signed with ES256";
  }
  return "The access token is not a well-formed signed JWT";
}
