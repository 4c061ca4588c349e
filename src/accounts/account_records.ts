// How accounts, businesses and memberships lie in the Store, and the writes that change them.
// Memberships are written both ways in one commit so that "my businesses" and "its members" are
// each one prefix listing. Every such commit also rewrites the business's roster record, whose
// version thereby stands for all its memberships: a decision read from the member list checks
// that one key (a check per member would also miss members added meanwhile, and Deno KV allows
// at most 100 checks per commit).
import type { Account, Role } from "./model.ts";
import type { Mutation, Store } from "../store/store.ts";

export const K = {
  account: (id: string) => ["accounts", "account", id],
  email: (email: string) => ["accounts", "email", email],
  business: (id: string) => ["accounts", "business", id],
  membership: (accountId: string, businessId: string) => [
    "accounts",
    "membership",
    accountId,
    businessId,
  ],
  memberships: (accountId: string) => ["accounts", "membership", accountId],
  member: (businessId: string, accountId: string) => ["accounts", "member", businessId, accountId],
  members: (businessId: string) => ["accounts", "member", businessId],
  roster: (businessId: string) => ["accounts", "roster", businessId],
} as const;

export interface RoleRecord {
  readonly role: Role;
}

/** E-mail addresses are compared lower-cased, without surrounding space. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A new account for a normalized address, and the writes that create it with its index. */
export function newAccount(address: string, now: () => number) {
  const account: Account = {
    id: crypto.randomUUID(),
    email: address,
    name: address.slice(0, address.indexOf("@")),
    createdAt: now(),
  };
  const mutations: Mutation[] = [
    { type: "set", key: K.account(account.id), value: account },
    { type: "set", key: K.email(address), value: account.id },
  ];
  return { account, mutations };
}

export function membershipMutations(
  accountId: string,
  businessId: string,
  role: Role,
  now: () => number,
): Mutation[] {
  return [
    { type: "set", key: K.membership(accountId, businessId), value: { role } },
    { type: "set", key: K.member(businessId, accountId), value: { role } },
    _rosterChanged(businessId, now),
  ];
}

export function removalMutations(
  accountId: string,
  businessId: string,
  now: () => number,
): Mutation[] {
  return [
    { type: "delete", key: K.membership(accountId, businessId) },
    { type: "delete", key: K.member(businessId, accountId) },
    _rosterChanged(businessId, now),
  ];
}

/** The writes that delete an account, its e-mail index and its memberships. */
export async function accountDeletion(
  store: Store,
  accountId: string,
  now: () => number,
): Promise<Mutation[]> {
  const account = (await store.get<Account>(K.account(accountId)))?.value ?? null;
  const mutations: Mutation[] = account ? [{ type: "delete", key: K.email(account.email) }] : [];
  for await (const entry of store.list<RoleRecord>(K.memberships(accountId))) {
    mutations.push(...removalMutations(accountId, String(entry.key.at(-1)), now));
  }
  mutations.push({ type: "delete", key: K.account(accountId) });
  return mutations;
}

/** The writes that delete a business with its memberships and roster. */
export async function businessDeletion(store: Store, businessId: string): Promise<Mutation[]> {
  const mutations: Mutation[] = [];
  for await (const entry of store.list<RoleRecord>(K.members(businessId))) {
    const accountId = String(entry.key.at(-1));
    mutations.push(
      { type: "delete", key: K.membership(accountId, businessId) },
      { type: "delete", key: entry.key },
    );
  }
  mutations.push(
    { type: "delete", key: K.roster(businessId) },
    { type: "delete", key: K.business(businessId) },
  );
  return mutations;
}

function _rosterChanged(businessId: string, now: () => number): Mutation {
  return { type: "set", key: K.roster(businessId), value: { changedAt: now() } };
}
