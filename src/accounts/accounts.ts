import type { Account, Accounts, Business, Membership, Role } from "./model.ts";
import type { Mutation, Store } from "../store/store.ts";
import { RETRY, retryCommit } from "../store/commit_retry.ts";
import {
  accountDeletion,
  businessDeletion,
  K,
  membershipMutations,
  newAccount,
  normalizeEmail,
  removalMutations,
  type RoleRecord,
} from "./account_records.ts";
import { planMembershipChange } from "./membership_plans.ts";

/** Thrown for a business or account that does not exist (admin and tools report it). */
export class AccountsError extends Error {
  override name = "AccountsError";
}

/**
 * Accounts, businesses and memberships over the Store (their keys and writes:
 * account_records.ts). E-mails are compared lower-cased.
 */
export function createAccounts(store: Store, now: () => number): Accounts {
  const getAccount = async (id: string) => (await store.get<Account>(K.account(id)))?.value ?? null;
  const getBusiness = async (id: string) =>
    (await store.get<Business>(K.business(id)))?.value ?? null;

  const findAccountByEmail = async (email: string) => {
    const index = await store.get<string>(K.email(normalizeEmail(email)));
    return index ? await getAccount(index.value) : null;
  };

  const newBusiness = (name: string): Business => ({
    id: crypto.randomUUID(),
    name: name.trim(),
    createdAt: now(),
  });

  /**
   * The account for an e-mail, created when new. The e-mail index is claimed with an
   * absent-check, so two concurrent sign-ups of one address make one account.
   */
  const ensureAccount = async (
    email: string,
    extra: (account: Account) => Mutation[],
  ): Promise<{ account: Account; created: boolean }> => {
    const address = normalizeEmail(email);
    return await retryCommit(async () => {
      const existing = await findAccountByEmail(address);
      if (existing) return { account: existing, created: false };
      const { account, mutations } = newAccount(address, now);
      const ok = await store.commit([{ key: K.email(address), version: null }], [
        ...mutations,
        ...extra(account),
      ]);
      return ok ? { account, created: true } : RETRY;
    });
  };

  const readMembership = async (accountId: string, businessId: string) => {
    const key = K.membership(accountId, businessId);
    const entry = await store.get<RoleRecord>(key);
    const membership: Membership | null = entry
      ? { accountId, businessId, role: entry.value.role }
      : null;
    return { membership, check: { key, version: entry?.version ?? null } };
  };

  const createBusiness = async (ownerId: string, name: string): Promise<Business> => {
    if (!(await getAccount(ownerId))) throw new AccountsError(`No account with id "${ownerId}"`);
    const business = newBusiness(name);
    await store.commit([], [
      { type: "set", key: K.business(business.id), value: business },
      ...membershipMutations(ownerId, business.id, "owner", now),
    ]);
    return business;
  };

  return {
    getAccount,
    findAccountByEmail,
    hasAccount: async (email) => (await store.get(K.email(normalizeEmail(email)))) !== null,
    getBusiness,

    async createAccountWithBusiness(email, businessName) {
      const business = newBusiness(businessName);
      const { account, created } = await ensureAccount(email, (account) => [
        { type: "set", key: K.business(business.id), value: business },
        ...membershipMutations(account.id, business.id, "owner", now),
      ]);
      // An existing account gets the business as its next one (signing up again).
      if (!created) return { account, business: await createBusiness(account.id, businessName) };
      return { account, business };
    },

    createBusiness,

    async planRename(id, name) {
      const entry = await store.get<Business>(K.business(id));
      if (!entry) return null;
      const renamed: Business = { ...entry.value, name: name.trim() };
      return {
        before: entry.value,
        renamed,
        check: { key: entry.key, version: entry.version },
        mutation: { type: "set", key: entry.key, value: renamed },
      };
    },

    async addMember(businessId, email, role) {
      if (!(await getBusiness(businessId))) {
        throw new AccountsError(`No business with id "${businessId}"`);
      }
      const { account } = await ensureAccount(email, () => []);
      await store.commit([], membershipMutations(account.id, businessId, role, now));
      return { accountId: account.id, businessId, role };
    },

    async removeMember(businessId, accountId) {
      await store.commit([], removalMutations(accountId, businessId, now));
    },

    getMembership: async (accountId, businessId) =>
      (await readMembership(accountId, businessId)).membership,

    readMembership,

    planMembershipChange: (businessId, change) =>
      planMembershipChange(store, now, businessId, change),

    async listBusinessesOf(accountId) {
      const out: { business: Business; role: Role }[] = [];
      for await (const entry of store.list<RoleRecord>(K.memberships(accountId))) {
        const business = await getBusiness(String(entry.key.at(-1)));
        if (business) out.push({ business, role: entry.value.role });
      }
      return out.sort((a, b) =>
        a.business.name.localeCompare(b.business.name) || a.business.id.localeCompare(b.business.id)
      );
    },

    async listMembers(businessId) {
      const out: { account: Account; role: Role }[] = [];
      for await (const entry of store.list<RoleRecord>(K.members(businessId))) {
        const account = await getAccount(String(entry.key.at(-1)));
        if (account) out.push({ account, role: entry.value.role });
      }
      return out.sort((a, b) => a.account.email.localeCompare(b.account.email));
    },

    async listAccounts() {
      const out: Account[] = [];
      for await (const entry of store.list<Account>(["accounts", "account"])) out.push(entry.value);
      return out.sort((a, b) => a.email.localeCompare(b.email));
    },

    async listBusinesses() {
      const out: Business[] = [];
      for await (const entry of store.list<Business>(["accounts", "business"])) {
        out.push(entry.value);
      }
      return out.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    },

    accountDeletion: (accountId) => accountDeletion(store, accountId, now),
    businessDeletion: (businessId) => businessDeletion(store, businessId),
  };
}
