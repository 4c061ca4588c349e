// Deleting an account or a business with everything that belongs only to it (the privacy page
// promises deletion on request). Access ends first (grants, then memberships), the records
// follow, and the business or account record itself goes last, so an interrupted deletion can
// simply be run again.
import { AccountsError } from "../../accounts/accounts.ts";
import { eventQueueOf } from "../../events/event_outbox.ts";
import { queueKeysOf } from "../../outbox/outbox.ts";
import type { Account, Accounts, Business } from "../../accounts/model.ts";
import { deleteSessionsOf } from "../../accounts/sessions.ts";
import {
  endGrantMutations,
  type GrantRecord,
  grantsOfAccount,
  latestGrantKey,
} from "../../oauth/grants.ts";
import type { RefreshRecord } from "../../oauth/refresh_tokens.ts";
import { STORE_LIMITS } from "../../store/limits.ts";
import type { Key, Mutation, Store } from "../../store/store.ts";
import type { AuditLog } from "../../workspace/domain/audit.ts";
import { attemptKeysOf } from "../../workspace/domain/connection_tests.ts";
import { gateKeysOf } from "../../workspace/domain/gate_record.ts";

export interface ErasureDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly audit: AuditLog;
}

/** Half of what one commit may write (limits.ts), to stay well inside it. */
const BATCH = STORE_LIMITS.commitWrites / 2;

export interface BusinessDeletion {
  readonly business: Business;
  readonly members: number;
  readonly revokedGrants: number;
  /** Records, gates, connection tests, events and audit entries. */
  readonly deletedRecords: number;
}

/**
 * Deletes a business: its members' grants in it, its memberships, its records, gates and audit
 * log (which would otherwise keep the names in it), then the business. Member accounts stay.
 */
export async function deleteBusiness(
  { store, accounts }: ErasureDeps,
  businessId: string,
): Promise<BusinessDeletion> {
  const business = await accounts.getBusiness(businessId);
  if (!business) throw new AccountsError(`No business with id "${businessId}"`);
  const members = await accounts.listMembers(businessId);
  let revokedGrants = 0;
  for (const { account } of members) {
    const grants = await grantsOfAccount(store, account.id, businessId);
    await _eraseGrants(store, grants);
    revokedGrants += grants.length;
  }
  const keys: Key[] = [
    ...await gateKeysOf(store, businessId),
    ...await attemptKeysOf(store, businessId),
    // Its events, sent or not: they name its people too.
    ...await queueKeysOf(store, eventQueueOf(businessId)),
  ];
  for (const prefix of [["ws", businessId], ["audit", businessId]]) {
    for await (const entry of store.list(prefix)) keys.push(entry.key);
  }
  await _commitInBatches(store, keys.map((key) => ({ type: "delete", key })));
  await store.commit([], await accounts.businessDeletion(businessId));
  return { business, members: members.length, revokedGrants, deletedRecords: keys.length };
}

export interface AccountDeletion {
  readonly account: Account;
  /** Businesses it was the only member of, deleted with it. */
  readonly deletedBusinesses: readonly BusinessDeletion[];
  /** Businesses it left; each has the departure in its audit log. */
  readonly leftBusinesses: readonly string[];
  readonly revokedGrants: number;
  readonly endedSessions: number;
}

/**
 * Deletes an account: the businesses it alone belongs to go with it; it leaves the others (in
 * their audit logs, actor "operator"); its grants and sessions end. Refused, before anything
 * changes, when it is the only owner of a business that has other members: that business
 * needs another owner first (`add-member --role owner`), or to be deleted (`delete-business`).
 */
export async function deleteAccount(deps: ErasureDeps, email: string): Promise<AccountDeletion> {
  const { store, accounts, audit } = deps;
  const account = await accounts.findAccountByEmail(email);
  if (!account) throw new AccountsError(`No account with e-mail "${email}"`);
  const alone: string[] = [];
  const left: string[] = [];
  for (const { business, role } of await accounts.listBusinessesOf(account.id)) {
    const others = (await accounts.listMembers(business.id)).filter((m) =>
      m.account.id !== account.id
    );
    if (others.length === 0) alone.push(business.id);
    else if (role === "owner" && !others.some((m) => m.role === "owner")) {
      throw new AccountsError(
        `${account.email} is the only owner of business "${business.id}" (${business.name}), ` +
          `which has other members: add another owner (add-member --role owner) or delete ` +
          `that business (delete-business) first`,
      );
    } else left.push(business.id);
  }
  const deletedBusinesses: BusinessDeletion[] = [];
  for (const businessId of alone) deletedBusinesses.push(await deleteBusiness(deps, businessId));
  const grants = await grantsOfAccount(store, account.id);
  await _eraseGrants(store, grants);
  const endedSessions = await deleteSessionsOf(store, account.id);
  await store.commit([], [
    ...await accounts.accountDeletion(account.id),
    ...left.map((businessId) =>
      audit.entry({
        businessId,
        accountId: account.id,
        actor: "operator",
        clientId: null,
        action: "delete-account",
        summary: `deleted the account of ${account.email}; it is no longer a member`,
        gateId: null,
      })
    ),
  ]);
  return {
    account,
    deletedBusinesses,
    leftBusinesses: left,
    revokedGrants: grants.length,
    endedSessions,
  };
}

/**
 * Ends grants and erases what revocation leaves to expire: the pointer to the latest grant and
 * the refresh-token records (keyed by their hash, so found by the grant they name).
 */
async function _eraseGrants(store: Store, grants: readonly GrantRecord[]): Promise<void> {
  if (grants.length === 0) return;
  const ids = new Set(grants.map((g) => g.id));
  const mutations: Mutation[] = grants.flatMap((grant) => [
    ...endGrantMutations(grant),
    { type: "delete", key: latestGrantKey(grant.accountId, grant.businessId, grant.clientId) },
  ]);
  for await (const entry of store.list<RefreshRecord>(["oauth", "refresh"])) {
    if (ids.has(entry.value.gid)) mutations.push({ type: "delete", key: entry.key });
  }
  await _commitInBatches(store, mutations);
}

async function _commitInBatches(store: Store, mutations: readonly Mutation[]): Promise<void> {
  for (let i = 0; i < mutations.length; i += BATCH) {
    await store.commit([], mutations.slice(i, i + BATCH));
  }
}
