/**
 * Accounts, businesses and memberships: the records every part reads.
 * Implemented by src/accounts/accounts.ts over the Store.
 */
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
  renameBusiness(id: string, name: string): Promise<Business | null>;
  /** Adds (or changes the role of) a member; creates the account when the e-mail is new. */
  addMember(businessId: string, email: string, role: Role): Promise<Membership>;
  removeMember(businessId: string, accountId: string): Promise<void>;
  getMembership(accountId: string, businessId: string): Promise<Membership | null>;
  /** The account's businesses with its role in each, by business name. */
  listBusinessesOf(accountId: string): Promise<{ business: Business; role: Role }[]>;
  listMembers(businessId: string): Promise<{ account: Account; role: Role }[]>;
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
