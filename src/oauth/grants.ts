/**
 * Grants: what one account, in one business, allowed one client. Tokens name their grant
 * (`gid`); revoking the grant kills every token of it within one verification.
 *
 * For tests (and anything else that needs a real token without the browser dance):
 *
 *   import { issueGrant } from "../../src/oauth/grants.ts";
 *   const { grantId, tokens } = await issueGrant({ config, store, now }, {
 *     accountId, businessId, clientId: "test-client", clientName: "Test client",
 *     scopes: ["app.access"], refresh: true,
 *   });
 *   // tokens.access_token is an ES256 JWT the workspace verifier accepts, signed with the
 *   // store's current key, exactly as the token endpoint issues it after a code exchange.
 *
 * The store must be the one the server under test uses (TestServer.store).
 */
import type { Config } from "../config.ts";
import type { Key, Mutation, Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";
import { newRefreshToken } from "./refresh_tokens.ts";
import { randomSecret } from "../secrets.ts";
import { createSigningKeys } from "./signing_keys.ts";
import { createTokenSigner, type TokenResponse, type TokenSigner } from "./tokens.ts";

export interface GrantRecord {
  readonly id: string;
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  /** The client's name when the grant was made (shown on /account). */
  readonly clientName: string;
  readonly scopes: readonly string[];
  /** The canonical resource the grant is bound to. */
  readonly resource: string;
  /** offline_access was granted: 30 days idle, 90 days in all; otherwise 24 hours. */
  readonly offline: boolean;
  /** The client is registered for the refresh_token grant. */
  readonly refreshable: boolean;
  readonly createdAt: number;
  /** When the human signed in for this grant (id_token auth_time). */
  readonly authTime: number;
}

export const grantKey = (gid: string): Key => ["oauth", "grant", gid];
const accountIndexKey = (accountId: string, gid: string): Key => [
  "oauth",
  "grants_of_account",
  accountId,
  gid,
];
const clientIndexKey = (clientId: string, gid: string): Key => [
  "oauth",
  "grants_of_client",
  clientId,
  gid,
];
const lastUsedKey = (gid: string): Key => ["oauth", "grant_used", gid];

/** When the grant ends if it is not used again: its idle limit, capped by its total limit. */
export function grantEndsAt(grant: GrantRecord, now: number): number {
  if (!grant.offline) return grant.createdAt + LIFETIMES.session;
  return Math.min(grant.createdAt + LIFETIMES.offlineTotal, now + LIFETIMES.offlineIdle);
}

/** The writes that (re)store a grant with its current expiry and indexes. */
export function grantMutations(grant: GrantRecord, now: number): Mutation[] {
  const expireIn = Math.max(1, grantEndsAt(grant, now) - now);
  return [
    { type: "set", key: grantKey(grant.id), value: grant, expireIn },
    { type: "set", key: accountIndexKey(grant.accountId, grant.id), value: grant.businessId },
    { type: "set", key: clientIndexKey(grant.clientId, grant.id), value: grant.accountId },
    { type: "set", key: lastUsedKey(grant.id), value: now, expireIn },
  ];
}

export interface GrantInput {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: readonly string[];
  readonly resource: string;
  readonly refreshable: boolean;
  readonly authTime: number;
  /** Present when `openid` was granted: the id_token's nonce and identity claims. */
  readonly openid?: { readonly nonce: string | null; readonly claims: Record<string, string> };
}

export interface PreparedGrant {
  readonly grant: GrantRecord;
  readonly response: TokenResponse;
  readonly mutations: Mutation[];
}

/** A new grant and its first tokens, as writes the caller commits with its own checks. */
export async function prepareGrant(
  deps: { signer: TokenSigner; now: () => number },
  input: GrantInput,
): Promise<PreparedGrant> {
  const now = deps.now();
  const grant: GrantRecord = {
    id: randomSecret(16),
    accountId: input.accountId,
    businessId: input.businessId,
    clientId: input.clientId,
    clientName: input.clientName,
    scopes: [...input.scopes],
    resource: input.resource,
    offline: input.scopes.includes("offline_access"),
    refreshable: input.refreshable,
    createdAt: now,
    authTime: input.authTime,
  };
  const mutations = grantMutations(grant, now);
  const endsAt = grantEndsAt(grant, now);
  const access = await deps.signer.accessToken({
    grantId: grant.id,
    accountId: grant.accountId,
    businessId: grant.businessId,
    clientId: grant.clientId,
    grantExpiresAt: endsAt,
  }, grant.scopes);
  let response: TokenResponse = {
    access_token: access.jwt,
    token_type: "Bearer",
    expires_in: access.expiresIn,
    scope: grant.scopes.join(" "),
  };
  if (grant.refreshable) {
    const refresh = await newRefreshToken(grant, endsAt - now);
    mutations.push(refresh.mutation);
    response = { ...response, refresh_token: refresh.token };
  }
  if (input.openid && grant.scopes.includes("openid")) {
    const idToken = await deps.signer.idToken({
      accountId: grant.accountId,
      clientId: grant.clientId,
      nonce: input.openid.nonce,
      authTime: grant.authTime,
      claims: input.openid.claims,
    });
    response = { ...response, id_token: idToken };
  }
  return { grant, response, mutations };
}

export interface IssueGrantInput {
  readonly accountId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly clientName?: string;
  readonly scopes: readonly string[];
  /** Also issue a refresh token (as for a client registered for refresh_token). */
  readonly refresh?: boolean;
}

/** Creates a grant and issues its tokens exactly as the token endpoint does (see the top). */
export async function issueGrant(
  deps: { config: Config; store: Store; now: () => number },
  input: IssueGrantInput,
): Promise<{ grantId: string; tokens: TokenResponse }> {
  const signer = createTokenSigner({
    config: deps.config,
    keys: createSigningKeys(deps),
    now: deps.now,
  });
  const prepared = await prepareGrant({ signer, now: deps.now }, {
    accountId: input.accountId,
    businessId: input.businessId,
    clientId: input.clientId,
    clientName: input.clientName ?? input.clientId,
    scopes: input.scopes,
    resource: deps.config.apiUrl,
    refreshable: input.refresh ?? false,
    authTime: deps.now(),
  });
  if (!await deps.store.commit([], prepared.mutations)) throw new Error("Cannot store the grant");
  return { grantId: prepared.grant.id, tokens: prepared.response };
}

export async function getGrant(store: Store, gid: string): Promise<GrantRecord | null> {
  return (await store.get<GrantRecord>(grantKey(gid)))?.value ?? null;
}

/** Ends a grant: its access tokens fail verification and its refresh tokens are dead. */
export async function revokeGrant(store: Store, gid: string): Promise<boolean> {
  const entry = await store.get<GrantRecord>(grantKey(gid));
  if (!entry) return false;
  const grant = entry.value;
  await store.commit([], [
    { type: "delete", key: grantKey(gid) },
    { type: "delete", key: accountIndexKey(grant.accountId, gid) },
    { type: "delete", key: clientIndexKey(grant.clientId, gid) },
    { type: "delete", key: lastUsedKey(gid) },
  ]);
  return true;
}

/** Records that a grant was used (token verification or refresh); cheap and conflict-free. */
export async function touchGrant(store: Store, gid: string, at: number): Promise<void> {
  const entry = await store.get<GrantRecord>(grantKey(gid));
  if (entry) {
    await store.set(lastUsedKey(gid), at, {
      expireIn: Math.max(1, grantEndsAt(entry.value, at) - at),
    });
  }
}

export interface GrantSummary {
  readonly grantId: string;
  readonly businessId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: readonly string[];
  readonly createdAt: number;
  readonly lastUsedAt: number;
}

/** The account's live grants (for /account), newest first; `businessId` narrows to one business. */
export async function listGrantsOfAccount(
  store: Store,
  accountId: string,
  businessId?: string,
): Promise<GrantSummary[]> {
  const out: GrantSummary[] = [];
  for await (const index of store.list<string>(["oauth", "grants_of_account", accountId])) {
    if (businessId !== undefined && index.value !== businessId) continue;
    const gid = String(index.key.at(-1));
    const grant = await getGrant(store, gid);
    if (!grant) {
      await store.delete(index.key); // the grant expired: drop its index too
      continue;
    }
    const lastUsed = await store.get<number>(lastUsedKey(gid));
    out.push({
      grantId: gid,
      businessId: grant.businessId,
      clientId: grant.clientId,
      clientName: grant.clientName,
      scopes: grant.scopes,
      createdAt: grant.createdAt,
      lastUsedAt: lastUsed?.value ?? grant.createdAt,
    });
  }
  return out.sort((a, b) => b.createdAt - a.createdAt);
}

/** Every live grant of a client (admin listing). */
export async function listGrantsOfClient(store: Store, clientId: string): Promise<GrantRecord[]> {
  const out: GrantRecord[] = [];
  for await (const index of store.list<string>(["oauth", "grants_of_client", clientId])) {
    const grant = await getGrant(store, String(index.key.at(-1)));
    if (grant) out.push(grant);
    else await store.delete(index.key);
  }
  return out;
}

/**
 * Revokes one account's grants to a client (the "revoke" button on /account); with no
 * accountId, every grant of the client. Returns how many were revoked.
 */
export async function revokeClientGrants(
  store: Store,
  clientId: string,
  accountId?: string,
): Promise<number> {
  let count = 0;
  for (const grant of await listGrantsOfClient(store, clientId)) {
    if (accountId !== undefined && grant.accountId !== accountId) continue;
    if (await revokeGrant(store, grant.id)) count++;
  }
  return count;
}
