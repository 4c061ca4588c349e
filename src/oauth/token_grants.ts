/**
 * The two grants of the token endpoint as functions from parameters to a token response
 * or an OAuthError (the HTTP shell is token_endpoint.ts).
 */
import type { Accounts, Role } from "../accounts/model.ts";
import type { Config } from "../config/config.ts";
import type { Store } from "../store/store.ts";
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import type { ClientRecord } from "./clients.ts";
import { codeKey, type CodeRecord } from "./codes.ts";
import { grantEndsAt, grantKey, grantMutations, type GrantRecord, revokeGrant } from "./grants.ts";
import { LIFETIMES } from "./issuer.ts";
import { OAuthError } from "./oauth_error.ts";
import type { OAuthMetrics, RevokedBy } from "./oauth_metrics.ts";
import { REFRESH_ANSWER_PURPOSE, refreshKey, type RefreshRecord } from "./refresh_tokens.ts";
import { canonicalResource } from "./resource.ts";
import type { ScopeCatalogue } from "./scopes.ts";
import { takeStepUp } from "./step_up.ts";
import { base64url, hashSecret, open, seal, sha256 } from "../secrets.ts";
import { issueTokens, prepareGrant, type TokenResponse } from "./token_issuance.ts";
import type { TokenSigner } from "./tokens.ts";

export interface TokenGrantDeps {
  readonly config: Pick<Config, "apiUrl">;
  readonly store: Store;
  readonly now: () => number;
  readonly signer: TokenSigner;
  readonly accounts: Accounts;
  readonly oauthMetrics?: OAuthMetrics | undefined;
  readonly scopes: ScopeCatalogue;
}

type Fields = Readonly<Record<string, string>>;

/** RFC 7636 §4.1: 43-128 characters of the unreserved set. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 8707 §2.2: a `resource` at the token endpoint may only repeat the bound one. */
function _resourceProblem(
  fields: Fields,
  bound: string,
  config: Pick<Config, "apiUrl">,
): OAuthError | null {
  if (fields.resource === undefined) return null;
  const check = canonicalResource(fields.resource, config);
  if (!check.ok) return new OAuthError("invalid_target", check.description);
  if (check.resource !== bound) {
    return new OAuthError("invalid_target", `"resource" must equal ${JSON.stringify(bound)}`);
  }
  return null;
}

/**
 * `admit` marks the request as the client's own once the grant proves it (client_endpoint.ts),
 * and may refuse it (429) before anything is committed.
 */
type Admit = () => Promise<void>;

/** RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6) and resource (RFC 8707 §2.2). */
export async function exchangeCode(
  deps: TokenGrantDeps,
  client: ClientRecord,
  fields: Fields,
  admit: Admit,
): Promise<TokenResponse> {
  const { store } = deps;
  const code = fields.code;
  if (code === undefined || code === "") {
    throw new OAuthError("invalid_request", "code is required");
  }
  const key = codeKey(await hashSecret(code));
  const entry = await store.get<CodeRecord>(key);
  if (!entry) {
    throw new OAuthError("invalid_grant", "The authorization code is unknown or has expired");
  }
  if (entry.value.state === "used") {
    await _revoke(deps, entry.value.gid, "code_replay");
    throw new OAuthError(
      "invalid_grant",
      "The authorization code was already used; the grant it created is revoked",
    );
  }
  const bound = entry.value;
  // Every failed check burns the code: a stolen code gets one try, and so does a guesser.
  // The caller throws what this returns, so each refusal reads as a throw where it happens.
  const burned = async (error: OAuthError): Promise<OAuthError> => {
    await store.commit([{ key, version: entry.version }], [{ type: "delete", key }]);
    return error;
  };
  if (bound.clientId !== client.clientId) {
    throw await burned(
      new OAuthError("invalid_grant", "The authorization code was issued to another client"),
    );
  }
  if (fields.redirect_uri !== bound.redirectUri) {
    throw await burned(
      new OAuthError(
        "invalid_grant",
        "redirect_uri must equal the one of the authorization request",
      ),
    );
  }
  const verifier = fields.code_verifier;
  if (verifier === undefined || !VERIFIER.test(verifier)) {
    throw await burned(
      new OAuthError(
        "invalid_grant",
        "code_verifier is required: 43-128 characters of [A-Za-z0-9._~-]",
      ),
    );
  }
  if (base64url(await sha256(verifier)) !== bound.codeChallenge) {
    throw await burned(
      new OAuthError("invalid_grant", "code_verifier does not match the code_challenge"),
    );
  }
  // The code and its verifier prove the client (RFC 7636 §1); a refusal here leaves the code.
  await admit();
  const wrongTarget = _resourceProblem(fields, bound.resource, deps.config);
  if (wrongTarget) throw await burned(wrongTarget);
  // The account may have left the business, or lost its ownership, since it consented.
  const membership = await deps.accounts.getMembership(bound.accountId, bound.businessId);
  if (!membership) {
    throw await burned(
      new OAuthError("invalid_grant", "The account is no longer a member of the business"),
    );
  }
  // A consent adds to what the client holds (a person removes access on /account): the new
  // grant is the scopes held now plus those consented, as far as the role still allows.
  const keep = (held: readonly string[]) =>
    _grantableTo(
      deps.scopes,
      membership.role,
      deps.scopes.supported.filter((s) => held.includes(s) || bound.scopes.includes(s)),
    );

  const openid = bound.scopes.includes("openid")
    ? {
      nonce: bound.nonce,
      claims: await _identityClaims(deps.accounts, bound.accountId, bound.scopes),
    }
    : undefined;
  // The consent takes effect here, not when the human allowed it: a code never exchanged
  // (abandoned, or stolen and failing PKCE) leaves the client's current grant untouched.
  return await retryCommit(async () => {
    const prepared = await prepareGrant(deps, {
      accountId: bound.accountId,
      businessId: bound.businessId,
      clientId: client.clientId,
      clientName: client.clientName ?? client.clientId,
      scopes: bound.scopes,
      keep,
      resource: bound.resource,
      refreshable: client.grantTypes.includes("refresh_token"),
      authTime: bound.authTime,
      ...(openid ? { openid } : {}),
    });
    if (prepared.grant.scopes.length === 0) {
      throw await burned(
        new OAuthError("invalid_grant", "None of the consented scopes can still be granted"),
      );
    }
    const used: CodeRecord = { state: "used", gid: prepared.grant.id };
    const ok = await store.commit([{ key, version: entry.version }, ...prepared.checks], [
      ...prepared.mutations,
      { type: "set", key, value: used, expireIn: LIFETIMES.usedCode },
    ]);
    if (ok) {
      deps.oauthMetrics?.tokensIssued("authorization_code");
      return prepared.response;
    }
    const now = await store.get<CodeRecord>(key);
    if (now?.version !== entry.version) {
      // Another request used the code at the same moment: that is a replay too.
      if (now?.value.state === "used") await _revoke(deps, now.value.gid, "code_replay");
      throw new OAuthError("invalid_grant", "The authorization code was already used");
    }
    // Another code of the same account, business and client was exchanged at the same
    // moment: prepare again, replacing the grant that one made.
    return RETRY;
  }, {
    attempts: 5,
    exhausted: () => {
      throw new OAuthError("invalid_grant", "The client's grant is being replaced concurrently");
    },
  });
}

/**
 * RFC 6749 §6 with rotation: the presented token moves from `current` to `rotated` in the
 * same atomic commit that stores its successor, so two concurrent refreshes cannot both
 * rotate it; the loser finds it rotated within the window and gets the winner's answer.
 */
export async function refreshGrant(
  deps: TokenGrantDeps,
  client: ClientRecord,
  fields: Fields,
  admit: Admit,
): Promise<TokenResponse> {
  const { store, now } = deps;
  const token = fields.refresh_token;
  if (token === undefined || token === "") {
    throw new OAuthError("invalid_request", "refresh_token is required");
  }
  const key = refreshKey(await hashSecret(token));
  return await retryCommit(async () => {
    const entry = await store.get<RefreshRecord>(key);
    if (!entry) {
      throw new OAuthError("invalid_grant", "The refresh token is unknown or has expired");
    }
    const record = entry.value;
    if (record.clientId !== client.clientId) {
      throw new OAuthError("invalid_grant", "The refresh token was issued to another client");
    }
    const grantEntry = await store.get<GrantRecord>(grantKey(record.gid));
    if (!grantEntry) throw new OAuthError("invalid_grant", "The grant was revoked or has ended");
    const grant = grantEntry.value;

    if (record.state === "rotated") {
      if (now() - record.rotatedAt <= LIFETIMES.refreshRetryWindow) {
        const answer = await open(token, REFRESH_ANSWER_PURPOSE, record.answer);
        if (answer !== null) {
          await admit();
          return JSON.parse(answer) as TokenResponse;
        }
      }
      deps.oauthMetrics?.refreshReuse();
      await _revoke(deps, grant.id, "refresh_reuse");
      throw new OAuthError(
        "invalid_grant",
        "The refresh token was already used; the grant is revoked",
      );
    }

    // A current refresh token of a live grant proves the client; a refusal leaves it current.
    await admit();
    const requested = _narrowed(deps.scopes, fields.scope, grant.scopes);
    const wrongTarget = _resourceProblem(fields, grant.resource, deps.config);
    if (wrongTarget) throw wrongTarget;
    const membership = await deps.accounts.getMembership(grant.accountId, grant.businessId);
    if (!membership) {
      await _revoke(deps, grant.id, "membership_ended");
      throw new OAuthError("invalid_grant", "The account is no longer a member of the business");
    }
    const scopes = _grantableTo(deps.scopes, membership.role, requested);
    if (scopes.length === 0) {
      throw new OAuthError("invalid_scope", "None of the requested scopes can still be granted");
    }
    // The resource just demanded a scope of this grant that only the person can add.
    const demanded = await takeStepUp(store, grant, now());
    if (demanded.length > 0) {
      throw new OAuthError(
        "invalid_grant",
        `The resource asked for ${
          demanded.join(" ")
        }, which this grant does not hold and no refresh can add: send the person an authorization request with the scopes the resource named. This refresh token was not used.`,
      );
    }

    const at = now();
    const { response, mutations } = await issueTokens(deps.signer, grant, {
      scopes,
      at,
      refresh: true,
    });
    const rotated: RefreshRecord = {
      state: "rotated",
      gid: grant.id,
      clientId: grant.clientId,
      rotatedAt: at,
      answer: await seal(token, REFRESH_ANSWER_PURPOSE, JSON.stringify(response)),
    };
    const ok = await store.commit(
      [{ key, version: entry.version }, { key: grantEntry.key, version: grantEntry.version }],
      [
        // Kept until the grant would end, so a late replay is still recognised as reuse.
        { type: "set", key, value: rotated, expireIn: Math.max(1, grantEndsAt(grant, at) - at) },
        ...mutations,
        ...grantMutations(grant, at),
      ],
    );
    if (ok) {
      deps.oauthMetrics?.tokensIssued("refresh_token");
      return response;
    }
    return RETRY;
  }, {
    attempts: 5,
    exhausted: () => {
      throw new OAuthError("invalid_grant", "The refresh token is being used concurrently");
    },
  });
}

/** Ends the grant, counted when it was still there to end. */
async function _revoke(deps: TokenGrantDeps, gid: string, by: RevokedBy): Promise<void> {
  if (await revokeGrant(deps.store, gid)) deps.oauthMetrics?.grantRevoked(by);
}

/** RFC 6749 §6: a refresh may ask for fewer scopes than granted, never more. */
function _narrowed(
  catalogue: ScopeCatalogue,
  requested: string | undefined,
  granted: readonly string[],
): string[] {
  if (requested === undefined) return [...granted];
  const parsed = catalogue.parse(requested);
  if (!parsed.ok) {
    throw new OAuthError(
      "invalid_scope",
      `scope ${JSON.stringify(parsed.unknown)} is not supported`,
    );
  }
  const wider = parsed.scopes.find((s) => !granted.includes(s));
  if (wider !== undefined) {
    throw new OAuthError("invalid_scope", `scope ${JSON.stringify(wider)} was not granted`);
  }
  if (parsed.scopes.length === 0) throw new OAuthError("invalid_scope", "scope must not be empty");
  return parsed.scopes;
}

async function _identityClaims(
  accounts: Accounts,
  accountId: string,
  scopes: readonly string[],
): Promise<Record<string, string>> {
  const account = await accounts.getAccount(accountId);
  const claims: Record<string, string> = {};
  if (!account) return claims;
  if (scopes.includes("email")) claims.email = account.email;
  if (scopes.includes("profile") && account.name !== "") claims.name = account.name;
  return claims;
}

/** The consent rule, applied again: an owner since demoted keeps only what a member may hold. */
function _grantableTo(catalogue: ScopeCatalogue, role: Role, scopes: readonly string[]): string[] {
  return role === "owner" ? [...scopes] : scopes.filter((s) => !catalogue.ownerOnly(s));
}
