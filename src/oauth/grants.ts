/**
 * Grants: what one account, in one business, allowed one client. Tokens name their grant
 * (`gid`); revoking the grant kills every token of it within one verification.
 *
 * One account, business and client hold one grant: a new grant replaces the previous one in
 * the same commit (see `prepareGrant`), so a step-up consent widens (or narrows) what the
 * client holds instead of adding a second grant, and the old tokens stop working.
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
import type { AtomicCheck, Key, Mutation, Store } from "../store/store.ts";
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
/**
 * The id of the latest grant of an account, business and client. Every new grant rewrites it
 * and its commit checks the version read before: of two grants prepared at the same moment
 * over the same predecessors, only one commits.
 */
const latestGrantKey = (accountId: string, businessId: string, clientId: string): Key => [
  "oauth",
  "latest_grant",
  accountId,
  businessId,
  clientId,
];

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
  /** The new grant and its first refresh token; the end of the grant(s) it replaces. */
  readonly mutations: Mutation[];
  /** To commit with the caller's own: they fail if another grant replaced the same ones. */
  readonly checks: AtomicCheck[];
}

/**
 * A new grant and its first tokens, as writes the caller commits with its own checks. It
 * replaces whatever the account, business and client held before: the new consent's scopes
 * are the grant's scopes (wider or narrower), its lifetimes count from now, and the old
 * grant's access and refresh tokens die with its record.
 */
export async function prepareGrant(
  deps: { store: Store; signer: TokenSigner; now: () => number },
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
  const latest = latestGrantKey(grant.accountId, grant.businessId, grant.clientId);
  const seen = await deps.store.get<string>(latest);
  const mutations: Mutation[] = [];
  // Every live grant of the three, not only the latest: grants made before this rule held.
  for (const old of await _grantsOfAccount(deps.store, grant.accountId, grant.businessId)) {
    if (old.clientId === grant.clientId) mutations.push(..._endMutations(old));
  }
  mutations.push(...grantMutations(grant, now), {
    type: "set",
    key: latest,
    value: grant.id,
    // The longest the grant can live: the key never outlasts it by much, nor ends before it.
    expireIn: grant.offline ? LIFETIMES.offlineTotal : LIFETIMES.session,
  });
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
  return { grant, response, mutations, checks: [{ key: latest, version: seen?.version ?? null }] };
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
  const prepared = await prepareGrant({ store: deps.store, signer, now: deps.now }, {
    accountId: input.accountId,
    businessId: input.businessId,
    clientId: input.clientId,
    clientName: input.clientName ?? input.clientId,
    scopes: input.scopes,
    resource: deps.config.apiUrl,
    refreshable: input.refresh ?? false,
    authTime: deps.now(),
  });
  if (!await deps.store.commit(prepared.checks, prepared.mutations)) {
    throw new Error("Cannot store the grant");
  }
  return { grantId: prepared.grant.id, tokens: prepared.response };
}

export async function getGrant(store: Store, gid: string): Promise<GrantRecord | null> {
  return (await store.get<GrantRecord>(grantKey(gid)))?.value ?? null;
}

/** Ends a grant: its access tokens fail verification and its refresh tokens are dead. */
export async function revokeGrant(store: Store, gid: string): Promise<boolean> {
  const entry = await store.get<GrantRecord>(grantKey(gid));
  if (!entry) return false;
  await store.commit([], _endMutations(entry.value));
  return true;
}

/** The deletes that end a grant (its refresh tokens then find no grant and are refused). */
function _endMutations(grant: GrantRecord): Mutation[] {
  const gid = grant.id;
  return [
    { type: "delete", key: grantKey(gid) },
    { type: "delete", key: accountIndexKey(grant.accountId, gid) },
    { type: "delete", key: clientIndexKey(grant.clientId, gid) },
    { type: "delete", key: lastUsedKey(gid) },
  ];
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
  for (const grant of await _grantsOfAccount(store, accountId, businessId)) {
    const lastUsed = await store.get<number>(lastUsedKey(grant.id));
    out.push({
      grantId: grant.id,
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

async function _grantsOfAccount(
  store: Store,
  accountId: string,
  businessId?: string,
): Promise<GrantRecord[]> {
  const out: GrantRecord[] = [];
  for await (const index of store.list<string>(["oauth", "grants_of_account", accountId])) {
    if (businessId !== undefined && index.value !== businessId) continue;
    const grant = await getGrant(store, String(index.key.at(-1)));
    if (grant) out.push(grant);
    else await store.delete(index.key); // the grant expired: drop its index too
  }
  return out;
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
