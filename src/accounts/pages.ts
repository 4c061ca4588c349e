// The human pages of {auth_url} that belong to accounts: plain forms, no JavaScript needed.
import { authPage, moment } from "../ui/auth_pages.ts";
import { connectAgentSection, COPY_SCRIPT } from "./connect_agent.ts";
import { businessLabels } from "./business_names.ts";
import { button, facts, linkButton, notice, onDemand, table } from "../ui/components.ts";
import { type Html, html } from "../ui/html.ts";
import type { Account, Business, Role } from "./model.ts";

/** One client the account authorized in a business, as /account lists it. */
export interface AuthorizedClientView {
  readonly grantId: string;
  readonly clientName: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
}

function _layout(title: string, main: Html, signedIn?: { email: string; signOutCsrf: string }) {
  return authPage({ title, main, ...(signedIn ? { signedIn } : {}) });
}

/** Keeps an interrupted authorization's way back when switching between sign-in and sign-up. */
function _withReturnTo(path: string, returnTo: string): string {
  return returnTo === "/account" ? path : `${path}?return_to=${encodeURIComponent(returnTo)}`;
}

function _error(message: string | undefined): Html | string {
  return message ? notice("error", message, "form-error") : "";
}

/** What a sign-up or sign-in form page shows: a second time, what was entered and why not. */
export interface LinkFormPage {
  readonly csrf: string;
  readonly returnTo: string;
  readonly entered?: Readonly<Record<string, string>>;
  readonly error?: string;
  /** What is waiting behind the sign-in: the application asking, the approval, the connection. */
  readonly waiting?: Html | null;
  /** The person just signed out (sign-out lands on the sign-in page). */
  readonly signedOut?: boolean;
}

function _waiting(waiting: Html | null | undefined): Html | string {
  return waiting ? notice("info", waiting, "waiting") : "";
}

export function signUpPage(options: LinkFormPage): string {
  return _layout(
    "Create an account",
    html`
      <p>Enter your e-mail address and the name of your business. We will send you a link;
      the account and the business are created when you confirm it. If you already have an
      account, the business is added to it.</p>
      ${_waiting(options.waiting)}
      ${_error(options.error)}
      <form method="post" action="/sign-up">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="return_to" value="${options.returnTo}">
        <label for="email">E-mail address</label>
        <input id="email" name="email" type="email" autocomplete="email" required maxlength="254"
          value="${options.entered?.email ?? ""}">
        <label for="business">Business name</label>
        <input id="business" name="business" type="text" autocomplete="organization" required
          maxlength="100" value="${options.entered?.business ?? ""}">
        <div class="actions">${button("Send me the link")}</div>
      </form>
      <p>Already have an account? <a href="${_withReturnTo(
        "/sign-in",
        options.returnTo,
      )}">Sign in</a>.</p>
    `,
  );
}

export function signInPage(options: LinkFormPage): string {
  return _layout(
    "Sign in",
    html`
      ${options.signedOut
        ? notice(
          "success",
          "You are signed out. Sign in again here when you need to.",
          "signed-out",
        )
        : ""}
      ${_waiting(options.waiting)}
      <p>There are no passwords: we send a one-time sign-in link to your e-mail address.</p>
      ${_error(options.error)}
      <form method="post" action="/sign-in">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="return_to" value="${options.returnTo}">
        <label for="email">E-mail address</label>
        <input id="email" name="email" type="email" autocomplete="email" required maxlength="254"
          value="${options.entered?.email ?? ""}">
        <div class="actions">${button("Send me a sign-in link")}</div>
      </form>
      <p>No account yet? <a href="${_withReturnTo(
        "/sign-up",
        options.returnTo,
      )}">Create one</a>.</p>
    `,
  );
}

/** The same page whether or not the address has an account (nothing is revealed). */
export function checkMailPage(email: string, purpose: "sign-in" | "sign-up"): string {
  return _layout(
    "Check your e-mail",
    html`
      ${notice(
        "success",
        html`<p>We have sent a message to <strong>${email}</strong>. ${
          purpose === "sign-up"
            ? "Open the link in it within 15 minutes to confirm your sign-up."
            : "Follow its instructions within 15 minutes to sign in."
        }</p>`,
      )}
      <p>You can close this tab: the link in the message brings you back to where you were.</p>
      <p
        class="muted">Nothing arrived? Check the spam folder, or <a href="/${purpose}">try again</a>.</p>
    `,
  );
}

export function confirmLinkPage(options: {
  token: string;
  csrf: string;
  email: string;
  businessName?: string;
  /** A sign-up link whose business the account already owns: it only signs in. */
  existing?: Business;
}): string {
  const { existing } = options;
  const signUp = options.businessName !== undefined && existing === undefined;
  return _layout(
    signUp ? "Confirm your sign-up" : "Confirm sign-in",
    html`
      ${existing === undefined ? "" : notice(
        "info",
        html`<p><strong>${existing.name}</strong> already exists for ${options.email} (created
          ${moment(existing.createdAt)}): this link creates no other business. It signs you in,
          and your account lists the business.</p>`,
        "business-exists",
      )}
      <p>${signUp
        ? html`Create the business <strong>${options.businessName}</strong> for
          <strong>${options.email}</strong> and sign in?`
        : html`Sign in as <strong>${options.email}</strong>?`}</p>
      <form method="post" action="/sign-in/verify">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <input type="hidden" name="token" value="${options.token}">
        <div class="actions">${button(signUp ? "Confirm and sign in" : "Sign in")}</div>
      </form>
    `,
  );
}

export function deadLinkPage(): string {
  return _layout(
    "This link cannot be used",
    html`
      ${notice(
        "error",
        "This link has expired or has already been used. Links work once, within 15 minutes.",
      )}
      <p><a href="/sign-in">Ask for a new sign-in link</a> or <a href="/sign-up">sign up</a>.</p>
    `,
  );
}

/** A sign-up link after a later one for the same address and business name: only the newest creates. */
export function supersededLinkPage(businessName: string): string {
  return _layout(
    "This link was replaced",
    html`
      ${notice(
        "warning",
        html`<p>A newer sign-up link for <strong>${businessName}</strong> was sent to this address
          since, and only the newest one creates the business: this one creates nothing.</p>`,
        "superseded",
      )}
      <p>Open the newest mail about ${businessName}, or <a href="/sign-up">sign up again</a>. If
        you already created it, <a href="/sign-in">sign in</a>.</p>
    `,
  );
}

export function signOutPage(options: { email: string; csrf: string }): string {
  return _layout(
    "Sign out",
    html`
      <p>You are signed in as <strong>${options.email}</strong>.</p>
      <form method="post" action="/sign-out">
        <input type="hidden" name="csrf" value="${options.csrf}">
        <div class="actions">${button("Sign out")}</div>
      </form>
    `,
  );
}

/** What other parts show of one business on /account (auth_site.ts composes them). */
export interface BusinessExtras {
  /** For owners, the approvals waiting for an owner (their empty state included); else null. */
  readonly approvals: Html | null;
  /** Each client that ran the agent connection test here, by id: its name and the test in words. */
  readonly connectionTests: ReadonlyMap<
    string,
    { readonly clientName: string; readonly status: Html }
  >;
  /** The person's connections to the business's per-person upstreams ("" when it has none). */
  readonly connections: Html;
}

export interface AccountBusinessView {
  readonly business: Business;
  readonly role: Role;
  readonly clients: readonly AuthorizedClientView[];
  /** Every member with their role, for an owner; null for a member. */
  readonly members: readonly { readonly email: string; readonly role: Role }[] | null;
  readonly extras: BusinessExtras;
}

const ROLE_WORDS: Readonly<Record<Role, string>> = { owner: "Owner", member: "Member" };

function _agents(options: {
  clients: readonly AuthorizedClientView[];
  tests: BusinessExtras["connectionTests"];
  revokeCsrf: string;
}): Html {
  const yours = new Set(options.clients.map((c) => c.clientId));
  const others = [...options.tests].filter(([clientId]) => !yours.has(clientId));
  // Agents that ran the connection test here for someone else: the business's, not revocable here.
  const othersTable = others.length === 0 ? "" : table(
    "Other agents tested in this business",
    [
      {
        label: "Agent",
        cell: ([clientId, test]) =>
          html`${test.clientName} ${onDemand("Id", `client ${clientId}`)}`,
      },
      { label: "Connection test", cell: ([, test]) => test.status },
    ],
    others,
  );
  if (options.clients.length === 0) {
    return html`<p class="muted">No agent acts for you in this business. An agent connects when you
      sign in and consent from it.</p>${othersTable}`;
  }
  return html`${
    table<AuthorizedClientView>("Agents acting for you", [
      {
        label: "Agent",
        cell: (c) =>
          html`<strong>${c.clientName}</strong><br>
          <span class="muted">${
            options.tests.get(c.clientId)?.status ?? "connection test not run"
          }</span>
          ${onDemand("Ids", `client ${c.clientId} · grant ${c.grantId}`)}`,
      },
      { label: "Permissions", cell: (c) => c.scopes.join(" ") },
      {
        label: "Activity",
        cell: (c) =>
          html`authorized ${moment(c.createdAt)}<br>last used ${
            c.lastUsedAt === null ? "never" : moment(c.lastUsedAt)
          }`,
      },
      {
        label: "Action",
        cell: (c) =>
          html`<form method="post" action="/account" class="inline">
          <input type="hidden" name="csrf" value="${options.revokeCsrf}">
          <input type="hidden" name="grant" value="${c.grantId}">
          ${button("Revoke", { kind: "destructive", ariaLabel: `Revoke ${c.clientName}` })}
        </form>`,
      },
    ], options.clients)
  }${othersTable}`;
}

function _members(view: AccountBusinessView, inviteCsrf: string): Html {
  if (view.members === null) {
    return html`<p>You are a member of this business; its owners manage its members and approvals,
      and read everyone's audit log.</p>`;
  }
  return html`${
    table("People in this business", [
      { label: "Person", cell: (m) => m.email },
      { label: "Role", cell: (m) => ROLE_WORDS[m.role] },
    ], view.members)
  }${_inviteForm(view.business.id, inviteCsrf)}`;
}

/** An owner adds someone to the business; they are mailed the invitation (workspace's). */
function _inviteForm(businessId: string, csrf: string): Html {
  return html`
    <form method="post" action="/account/members" class="invite">
      <input type="hidden" name="csrf" value="${csrf}">
      <input type="hidden" name="business" value="${businessId}">
      <label for="invite-email-${businessId}">Invite someone by e-mail</label>
      <input id="invite-email-${businessId}" name="email" type="email" autocomplete="off" required
        maxlength="254">
      <label for="invite-role-${businessId}">Role</label>
      <select id="invite-role-${businessId}" name="role">
        <option value="member" selected>Member: works with agents</option>
        <option value="owner">Owner: also approves and manages members</option>
      </select>
      <div class="actions">${button("Send the invitation", { kind: "secondary" })}</div>
    </form>
  `;
}

/** Below the businesses: another business for owners; for a member it is not the way in. */
function _otherBusinesses(businesses: readonly AccountBusinessView[]): Html {
  if (businesses.length === 0) {
    return html`<p class="muted">You are not a member of any business. Ask an owner to invite
      you, or <a href="/sign-up">create a business</a>.</p>`;
  }
  return businesses.some((b) => b.role === "owner")
    ? html`<p><a href="/sign-up">Add another business</a></p>`
    : html``;
}

export function accountPage(options: {
  account: Account;
  signOutCsrf: string;
  revokeCsrf: string;
  /** The owners' invitation form's token. */
  inviteCsrf: string;
  businesses: readonly AccountBusinessView[];
  /** {api_url}: the agent connects to its MCP endpoint. */
  apiUrl: string;
  /** The outcome of the form just sent, or the welcome after a sign-up. */
  notice?: Html;
}): string {
  const label = businessLabels(options.businesses.map((b) => b.business));
  const card = (view: AccountBusinessView) => {
    const { business, role, extras } = view;
    const owner = role === "owner";
    return html`
      <section class="card" aria-labelledby="business-${business.id}">
        <h3 id="business-${business.id}">${label(business)}</h3>
        ${facts([["Your role", ROLE_WORDS[role]]])}
        ${extras.approvals === null
          ? ""
          : html`<h4>Waiting for your approval</h4>${extras.approvals}`}
        <h4>Connected agents</h4>
        ${_agents({
          clients: view.clients,
          tests: extras.connectionTests,
          revokeCsrf: options.revokeCsrf,
        })}
        <h4>Members</h4>
        ${_members(view, options.inviteCsrf)}
        ${extras.connections}
        <p class="actions">${linkButton(
          `/account/servers?business=${business.id}`,
          "Servers and tools",
        )}</p>
        <p class="actions">${linkButton(
          `/account/audit?business=${business.id}`,
          owner ? "Audit log" : "Your audit log",
        )}</p>
      </section>
    `;
  };
  const { businesses } = options;
  return authPage({
    title: "Your account",
    main: html`
      ${options.notice ?? ""}
      ${facts([["E-mail", options.account.email]])}
      ${businesses.length === 0 ? "" : connectAgentSection(options.apiUrl)}
      <h2>Businesses</h2>
      ${businesses.map(card)}
      ${_otherBusinesses(businesses)}
    `,
    signedIn: { email: options.account.email, signOutCsrf: options.signOutCsrf },
    head: COPY_SCRIPT,
  });
}

/** What /account says first after a sign-up created a business. */
export function welcomeNotice(): Html {
  return notice(
    "success",
    html`<p><strong>Welcome to Vestibule.</strong> Your business is ready. To let your agent
      work with it, connect the agent as shown under "Connect your agent".</p>`,
    "welcome",
  );
}

export function errorPage(title: string, message: string): string {
  return _layout(title, notice("error", message));
}
