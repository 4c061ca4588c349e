import type { Account, Accounts, Business, Membership, MembershipPlan, Role } from "./model.ts";
import type { AtomicCheck, Mutation, Store } from "../store/store.ts";
import { RETRY, retryCommit } from "../store/commit_retry.ts";

/** Thrown for a business or account that does not exist (admin and tools report it). */
export class AccountsError extends Error {
  override name = "AccountsError";
}

/**
 * Key layout. Memberships are written both ways in one commit so that "my businesses"
 * and "its members" are each one prefix listing. Every such commit also rewrites the
 * business's roster record, whose version thereby stands for all its memberships: a
 * decision read from the member list checks that one key (a check per member would also
 * miss members added meanwhile, and Deno KV allows at most 100 checks per commit).
 */
const K = {
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

interface RoleRecord {
  readonly role: Role;
}

/** Accounts, businesses and memberships over the Store. E-mails are compared lower-cased. */
export function createAccounts(store: Store, now: () => number): Accounts {
  const normalize = (email: string) => email.trim().toLowerCase();

  const getAccount = async (id: string) => (await store.get<Account>(K.account(id)))?.value ?? null;
  const getBusiness = async (id: string) =>
    (await store.get<Business>(K.business(id)))?.value ?? null;

  const findAccountByEmail = async (email: string) => {
    const index = await store.get<string>(K.email(normalize(email)));
    return index ? await getAccount(index.value) : null;
  };

  const newBusiness = (name: string): Business => ({
    id: crypto.randomUUID(),
    name: name.trim(),
    createdAt: now(),
  });

  /** A new account for a normalized address, and the writes that create it with its index. */
  const newAccount = (address: string) => {
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
  };

  const rosterChanged = (businessId: string): Mutation => ({
    type: "set",
    key: K.roster(businessId),
    value: { changedAt: now() },
  });

  const membershipMutations = (
    accountId: string,
    businessId: string,
    role: Role,
  ): Mutation[] => [
    { type: "set", key: K.membership(accountId, businessId), value: { role } },
    { type: "set", key: K.member(businessId, accountId), value: { role } },
    rosterChanged(businessId),
  ];

  const removalMutations = (accountId: string, businessId: string): Mutation[] => [
    { type: "delete", key: K.membership(accountId, businessId) },
    { type: "delete", key: K.member(businessId, accountId) },
    rosterChanged(businessId),
  ];

  /**
   * The account for an e-mail, created when new. The e-mail index is claimed with an
   * absent-check, so two concurrent sign-ups of one address make one account.
   */
  const ensureAccount = async (
    email: string,
    extra: (account: Account) => Mutation[],
  ): Promise<{ account: Account; created: boolean }> => {
    const address = normalize(email);
    return await retryCommit(async () => {
      const existing = await findAccountByEmail(address);
      if (existing) return { account: existing, created: false };
      const { account, mutations } = newAccount(address);
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
      ...membershipMutations(ownerId, business.id, "owner"),
    ]);
    return business;
  };

  return {
    getAccount,
    findAccountByEmail,
    hasAccount: async (email) => (await store.get(K.email(normalize(email)))) !== null,
    getBusiness,

    async createAccountWithBusiness(email, businessName) {
      const business = newBusiness(businessName);
      const { account, created } = await ensureAccount(email, (account) => [
        { type: "set", key: K.business(business.id), value: business },
        ...membershipMutations(account.id, business.id, "owner"),
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
      await store.commit([], membershipMutations(account.id, businessId, role));
      return { accountId: account.id, businessId, role };
    },

    async removeMember(businessId, accountId) {
      await store.commit([], removalMutations(accountId, businessId));
    },

    getMembership: async (accountId, businessId) =>
      (await readMembership(accountId, businessId)).membership,

    readMembership,

    async planMembershipChange(businessId, { change, email, role }): Promise<MembershipPlan> {
      const address = normalize(email);
      // The roster's version is read before the members, so a change in between fails the check.
      const roster = await store.get(K.roster(businessId));
      const index = await store.get<string>(K.email(address));
      const checks: AtomicCheck[] = [
        { key: K.roster(businessId), version: roster?.version ?? null },
        { key: K.email(address), version: index?.version ?? null },
      ];
      let target: Role | null = null;
      let owners = 0;
      for await (const entry of store.list<RoleRecord>(K.members(businessId))) {
        if (entry.value.role === "owner") owners++;
        if (index && entry.key.at(-1) === index.value) target = entry.value.role;
      }
      if (change === "invite") {
        if (target) return { ok: false, reason: `${address} is already a member`, checks };
        // A new address gets its account in the same commit (the index check keeps it unique).
        const created = index ? null : newAccount(address);
        const accountId = index?.value ?? created!.account.id;
        return {
          ok: true,
          checks,
          mutations: [
            ...(created?.mutations ?? []),
            ...membershipMutations(accountId, businessId, role),
          ],
        };
      }
      if (!index || !target) {
        return { ok: false, reason: `${address} is not a member of this business`, checks };
      }
      if (target === "owner" && owners === 1 && (change === "remove" || role !== "owner")) {
        return {
          ok: false,
          reason: `${address} is the only owner; add another owner first`,
          checks,
        };
      }
      return {
        ok: true,
        checks,
        mutations: change === "remove"
          ? removalMutations(index.value, businessId)
          : membershipMutations(index.value, businessId, role),
      };
    },

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

    async accountDeletion(accountId) {
      const account = await getAccount(accountId);
      const mutations: Mutation[] = account
        ? [{ type: "delete", key: K.email(account.email) }]
        : [];
      for await (const entry of store.list<RoleRecord>(K.memberships(accountId))) {
        mutations.push(...removalMutations(accountId, String(entry.key.at(-1))));
      }
      mutations.push({ type: "delete", key: K.account(accountId) });
      return mutations;
    },

    async businessDeletion(businessId) {
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
    },
  };
}
