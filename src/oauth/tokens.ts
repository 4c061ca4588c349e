/**
 * Signs the JWTs the authorization server issues: access tokens (RFC 9068 profile, ES256)
 * and OpenID Connect id_tokens.
 */
import { SignJWT } from "jose/jwt/sign";
import type { Config } from "../config/config.ts";
import type { AccessTokenClaims } from "./access_token.ts";
import { issuerOf, LIFETIMES } from "./issuer.ts";
import { formatScope } from "./scopes.ts";
import { randomSecret } from "../secrets.ts";
import type { SigningKeys } from "./signing_keys.ts";

export interface AccessTokenSubject {
  readonly grantId: string;
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  /** The grant's own end: no token outlives it. */
  readonly grantExpiresAt: number;
}

export interface TokenSigner {
  /** An access token for `scopes`, and its lifetime in seconds. */
  accessToken(
    subject: AccessTokenSubject,
    scopes: readonly string[],
  ): Promise<{ jwt: string; expiresIn: number }>;
  idToken(input: {
    readonly accountId: string;
    readonly clientId: string;
    readonly nonce: string | null;
    readonly authTime: number;
    readonly claims: Readonly<Record<string, string>>;
  }): Promise<string>;
}

export function createTokenSigner(
  deps: { config: Pick<Config, "authUrl" | "apiUrl">; keys: SigningKeys; now: () => number },
): TokenSigner {
  const { config, keys, now } = deps;
  const issuer = issuerOf(config);
  return {
    async accessToken(subject, scopes) {
      const key = await keys.current();
      const iat = Math.floor(now() / 1000);
      const exp = Math.min(
        iat + LIFETIMES.accessToken / 1000,
        Math.floor(subject.grantExpiresAt / 1000),
      );
      const claims: AccessTokenClaims = {
        iss: issuer,
        aud: config.apiUrl,
        sub: subject.accountId,
        business: subject.businessId,
        client_id: subject.clientId,
        scope: formatScope(scopes),
        gid: subject.grantId,
        jti: randomSecret(16),
        iat,
        exp,
      };
      const jwt = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: "ES256", kid: key.kid, typ: "at+jwt" })
        .sign(key.privateKey);
      return { jwt, expiresIn: exp - iat };
    },
    async idToken(input) {
      const key = await keys.current();
      const iat = Math.floor(now() / 1000);
      const payload: Record<string, unknown> = {
        ...input.claims,
        iss: issuer,
        sub: input.accountId,
        aud: input.clientId,
        iat,
        exp: iat + LIFETIMES.accessToken / 1000,
        auth_time: Math.floor(input.authTime / 1000),
      };
      if (input.nonce !== null) payload.nonce = input.nonce;
      return await new SignJWT(payload)
        .setProtectedHeader({ alg: "ES256", kid: key.kid, typ: "JWT" })
        .sign(key.privateKey);
    },
  };
}
