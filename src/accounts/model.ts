/**
 * Accounts, businesses and memberships: the records every part reads.
 * Implemented by src/accounts/accounts.ts over the Store.
 */
import type { AtomicCheck, Mutation } from "../store/store.ts";

export type Role = "owner" | "member";

export interface Account {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  readonly createdAt: number;
}

export interface Business {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
}

export interface Membership {
  readonly accountId: string;
  readonly businessId: string;
  readonly role: Role;
}

/** A change of a business's members that an owner approves (an access-change gate). */
export interface MembershipChange {
  readonly change: "invite" | "change_role" | "remove";
  readonly email: string;
  readonly role: Role;
}

/**
 * The writes of a membership change, or why it cannot apply. Either way `checks` cover every
 * record the answer was read from: committed with them, it applies only while still true.
 */
export type MembershipPlan =
  | {
    readonly ok: true;
    readonly checks: readonly AtomicCheck[];
    readonly mutations: readonly Mutation[];
  }
  | { readonly ok: false; readonly reason: string; readonly checks: readonly AtomicCheck[] };

export interface Accounts {
  getAccount(id: string): Promise<Account | null>;
  findAccountByEmail(email: string): Promise<Account | null>;
  /** One read, whatever the answer: sign-in must not take longer for a known address. */
  hasAccount(email: string): Promise<boolean>;
  /** A new account owning a new business (sign-up, admin). */
  createAccountWithBusiness(
    email: string,
    businessName: string,
  ): Promise<{ account: Account; business: Business }>;
  /** Another business owned by an existing account (the same e-mail signing up again). */
  createBusiness(ownerId: string, name: string): Promise<Business>;
  getBusiness(id: string): Promise<Business | null>;
  /**
   * The rename as a check and a write for the caller's commit (with its audit entry and event),
   * or null for an unknown business.
   */
  planRename(id: string, name: string): Promise<
    {
      readonly before: Business;
      readonly renamed: Business;
      readonly check: AtomicCheck;
      readonly mutation: Mutation;
    } | null
  >;
  /** Adds (or changes the role of) a member; creates the account when the e-mail is new. */
  addMember(businessId: string, email: string, role: Role): Promise<Membership>;
  removeMember(businessId: string, accountId: string): Promise<void>;
  getMembership(accountId: string, businessId: string): Promise<Membership | null>;
  /** The membership (or null) with the check that it is unchanged when a decision on it commits. */
  readMembership(
    accountId: string,
    businessId: string,
  ): Promise<{ membership: Membership | null; check: AtomicCheck }>;
  /** Plans a change under the rule that a business keeps at least one owner. */
  planMembershipChange(businessId: string, change: MembershipChange): Promise<MembershipPlan>;
  /** The account's businesses with its role in each, by business name. */
  listBusinessesOf(accountId: string): Promise<{ business: Business; role: Role }[]>;
  listMembers(businessId: string): Promise<{ account: Account; role: Role }[]>;
  /** Every account, by e-mail (admin). */
  listAccounts(): Promise<Account[]>;
  /** Every business, by name (admin). */
  listBusinesses(): Promise<Business[]>;
  /** The writes that delete an account, its e-mail index and its memberships (admin). */
  accountDeletion(accountId: string): Promise<Mutation[]>;
  /** The writes that delete a business with its memberships and roster (admin). */
  businessDeletion(businessId: string): Promise<Mutation[]>;
}

/** The signed-in human behind a browser request. */
export interface Session {
  readonly id: string;
  readonly account: Account;
}

export interface Sessions {
  /** The session named by the request's cookie, or null. */
  current(request: Request): Promise<Session | null>;
  /**
   * A hidden-field token bound to the session and the form's purpose (e.g. "consent");
   * `verifyCsrf` accepts it only for that session and purpose.
   */
  csrfToken(session: Session, purpose: string): Promise<string>;
  verifyCsrf(session: Session, purpose: string, token: string): Promise<boolean>;
  /** Where to send a visitor who must sign in first; `returnTo` is a path on {auth_url}. */
  signInUrl(returnTo: string): string;
  /** Starts a session for the account; returns the `Set-Cookie` value to send. */
  start(accountId: string): Promise<string>;
  /** Ends the session; returns the `Set-Cookie` value that clears the cookie. */
  end(session: Session): Promise<string>;
}
