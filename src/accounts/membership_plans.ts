// A change of a business's members (invite, change a role, remove) planned as checks and writes
// for the caller's commit, under the rule that a business keeps at least one owner.
import type { MembershipChange, MembershipPlan, Role } from "./model.ts";
import type { AtomicCheck, Store } from "../store/store.ts";
import {
  K,
  membershipMutations,
  newAccount,
  normalizeEmail,
  removalMutations,
  type RoleRecord,
} from "./account_records.ts";

export async function planMembershipChange(
  store: Store,
  now: () => number,
  businessId: string,
  { change, email, role }: MembershipChange,
): Promise<MembershipPlan> {
  const address = normalizeEmail(email);
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
    const created = index ? null : newAccount(address, now);
    const accountId = index?.value ?? created!.account.id;
    return {
      ok: true,
      checks,
      mutations: [
        ...(created?.mutations ?? []),
        ...membershipMutations(accountId, businessId, role, now),
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
      ? removalMutations(index.value, businessId, now)
      : membershipMutations(index.value, businessId, role, now),
  };
}
