/**
 * Grants: what one account, in one business, allowed one client. Tokens name their grant
 * (`gid`); revoking the grant kills every token of it within one verification.
 *
 * One account, business and client hold one grant: a new grant replaces the previous one in
 * the same commit (token_issuance.ts `prepareGrant`), so a step-up consent widens what the
 * client holds (it keeps what was held) instead of adding a second grant, and the old tokens
 * stop working. This module keeps the records; issuing tokens for them is token_issuance.ts.
 */
import type { Key, Mutation, Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";

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
export const latestGrantKey = (accountId: string, businessId: string, clientId: string): Key => [
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

export async function getGrant(store: Store, gid: string): Promise<GrantRecord | null> {
  return (await store.get<GrantRecord>(grantKey(gid)))?.value ?? null;
}

/** Ends a grant: its access tokens fail verification and its refresh tokens are dead. */
export async function revokeGrant(store: Store, gid: string): Promise<boolean> {
  const entry = await store.get<GrantRecord>(grantKey(gid));
  if (!entry) return false;
  await store.commit([], endGrantMutations(entry.value));
  return true;
}

/** The deletes that end a grant (its refresh tokens then find no grant and are refused). */
export function endGrantMutations(grant: GrantRecord): Mutation[] {
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
  for (const grant of await grantsOfAccount(store, accountId, businessId)) {
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

/** The account's live grant records, in one business when `businessId` is given. */
export async function grantsOfAccount(
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

/** The scopes an account's live grant(s) in a business hold for a client (a step-up keeps them). */
export async function heldScopes(
  store: Store,
  accountId: string,
  businessId: string,
  clientId: string,
): Promise<string[]> {
  const held = new Set<string>();
  for (const grant of await grantsOfAccount(store, accountId, businessId)) {
    if (grant.clientId === clientId) { for (const scope of grant.scopes) held.add(scope); }
  }
  return [...held];
}
