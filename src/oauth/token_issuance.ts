/**
 * Issuing tokens for a grant: the one place that builds a token response (RFC 6749 §5.1),
 * for a new grant after a code exchange (`prepareGrant`) and for a refresh (token_grants.ts).
 */
import { randomSecret } from "../secrets.ts";
import type { AtomicCheck, Mutation, Store } from "../store/store.ts";
import {
  endGrantMutations,
  grantEndsAt,
  grantKey,
  grantMutations,
  type GrantRecord,
  grantsOfAccount,
  latestGrantKey,
} from "./grants.ts";
import { LIFETIMES } from "./issuer.ts";
import { newRefreshToken } from "./refresh_tokens.ts";
import type { TokenSigner } from "./tokens.ts";

/** The body of a successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: "Bearer";
  readonly expires_in: number;
  readonly scope: string;
  readonly refresh_token?: string;
  readonly id_token?: string;
}

/** Present when `openid` was granted: the id_token's nonce and identity claims. */
export interface OpenIdRequest {
  readonly nonce: string | null;
  readonly claims: Record<string, string>;
}

export interface IssuedTokens {
  readonly response: TokenResponse;
  /** Store the refresh token, when one was issued; the caller commits them with its own writes. */
  readonly mutations: readonly Mutation[];
}

/**
 * An access token for `scopes` (the grant's, or fewer), a new refresh token when `refresh`,
 * and an id_token when `openid` is given and granted. No token outlives the grant.
 */
export async function issueTokens(
  signer: TokenSigner,
  grant: GrantRecord,
  request: {
    readonly scopes: readonly string[];
    readonly at: number;
    readonly refresh: boolean;
    readonly openid?: OpenIdRequest;
  },
): Promise<IssuedTokens> {
  const endsAt = grantEndsAt(grant, request.at);
  const access = await signer.accessToken({
    grantId: grant.id,
    accountId: grant.accountId,
    businessId: grant.businessId,
    clientId: grant.clientId,
    grantExpiresAt: endsAt,
  }, request.scopes);
  let response: TokenResponse = {
    access_token: access.jwt,
    token_type: "Bearer",
    expires_in: access.expiresIn,
    scope: request.scopes.join(" "),
  };
  const mutations: Mutation[] = [];
  if (request.refresh) {
    const refresh = await newRefreshToken(grant, endsAt - request.at);
    mutations.push(refresh.mutation);
    response = { ...response, refresh_token: refresh.token };
  }
  if (request.openid && request.scopes.includes("openid")) {
    const idToken = await signer.idToken({
      accountId: grant.accountId,
      clientId: grant.clientId,
      nonce: request.openid.nonce,
      authTime: grant.authTime,
      claims: request.openid.claims,
    });
    response = { ...response, id_token: idToken };
  }
  return { response, mutations };
}

export interface GrantInput {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: readonly string[];
  /**
   * The grant's scopes from the scopes its predecessors held (in their order); without it,
   * `scopes` alone. A step-up consent keeps what the client held (token_grants.ts).
   */
  readonly keep?: (held: readonly string[]) => readonly string[];
  readonly resource: string;
  readonly refreshable: boolean;
  readonly authTime: number;
  readonly openid?: OpenIdRequest;
}

export interface PreparedGrant {
  readonly grant: GrantRecord;
  readonly response: TokenResponse;
  /** The new grant and its first refresh token; the end of the grant(s) it replaces. */
  readonly mutations: Mutation[];
  /** To commit with the caller's own: they fail if another grant replaced the same ones. */
  readonly checks: AtomicCheck[];
}

/**
 * A new grant and its first tokens, as writes the caller commits with its own checks. It
 * replaces whatever the account, business and client held before: its scopes are `keep`'s
 * answer (or the input's), its lifetimes count from now, and the old grant's access and
 * refresh tokens die with its record. The commit checks each replaced grant, so one revoked
 * meanwhile (on /account) is not carried over.
 */
export async function prepareGrant(
  deps: { store: Store; signer: TokenSigner; now: () => number },
  input: GrantInput,
): Promise<PreparedGrant> {
  const now = deps.now();
  const latest = latestGrantKey(input.accountId, input.businessId, input.clientId);
  const seen = await deps.store.get<string>(latest);
  const mutations: Mutation[] = [];
  const checks: AtomicCheck[] = [{ key: latest, version: seen?.version ?? null }];
  const held: string[] = [];
  // Every live grant of the three, not only the latest: grants made before this rule held.
  for (const old of await grantsOfAccount(deps.store, input.accountId, input.businessId)) {
    if (old.clientId !== input.clientId) continue;
    const entry = await deps.store.get<GrantRecord>(grantKey(old.id));
    if (!entry) continue;
    mutations.push(...endGrantMutations(entry.value));
    checks.push({ key: entry.key, version: entry.version });
    held.push(...entry.value.scopes.filter((s) => !held.includes(s)));
  }
  const scopes = input.keep ? input.keep(held) : input.scopes;
  const grant: GrantRecord = {
    id: randomSecret(16),
    accountId: input.accountId,
    businessId: input.businessId,
    clientId: input.clientId,
    clientName: input.clientName,
    scopes: [...scopes],
    resource: input.resource,
    offline: scopes.includes("offline_access"),
    refreshable: input.refreshable,
    createdAt: now,
    authTime: input.authTime,
  };
  mutations.push(...grantMutations(grant, now), {
    type: "set",
    key: latest,
    value: grant.id,
    // The longest the grant can live: the key never outlasts it by much, nor ends before it.
    expireIn: grant.offline ? LIFETIMES.offlineTotal : LIFETIMES.session,
  });
  const issued = await issueTokens(deps.signer, grant, {
    scopes: grant.scopes,
    at: now,
    refresh: grant.refreshable,
    ...(input.openid ? { openid: input.openid } : {}),
  });
  mutations.push(...issued.mutations);
  return { grant, response: issued.response, mutations, checks };
}
