// The human pages of {auth_url} that belong to accounts: plain forms, no JavaScript.
import { authPage, utcMinute } from "../ui/auth_pages.ts";
import { button, notice } from "../ui/components.ts";
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
}): string {
  const signUp = options.businessName !== undefined;
  return _layout(
    signUp ? "Confirm your sign-up" : "Confirm sign-in",
    html`
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

export function accountPage(options: {
  account: Account;
  signOutCsrf: string;
  revokeCsrf: string;
  businesses: readonly {
    business: Business;
    role: Role;
    clients: readonly AuthorizedClientView[];
    /** What other parts show about this business (the workspace's connection tests, audit). */
    more: Html;
  }[];
  notice?: string;
}): string {
  const clients = (list: readonly AuthorizedClientView[]) =>
    list.length === 0
      ? html`<p class="muted">No clients are authorized in this business.</p>`
      : html`
        <table>
          <caption>Authorized clients</caption>
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Scopes</th>
              <th scope="col">Authorized</th>
              <th scope="col">Last used</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>${list.map((c) =>
            html`
              <tr>
                <td>${c.clientName} <span class="muted">(${c.clientId})</span></td>
                <td>${c.scopes.join(" ")}</td>
                <td>${utcMinute(c.createdAt)}</td>
                <td>${c.lastUsedAt === null ? "never" : utcMinute(c.lastUsedAt)}</td>
                <td>
                  <form method="post" action="/account">
                    <input type="hidden" name="csrf" value="${options.revokeCsrf}">
                    <input type="hidden" name="grant" value="${c.grantId}">
                    <button type="submit" aria-label="Revoke ${c.clientName}">Revoke</button>
                  </form>
                </td>
              </tr>
            `
          )}</tbody>
        </table>
      `;
  return _layout(
    "Your account",
    html`
      ${options.notice ? html`<p role="status">${options.notice}</p>` : ""}
      <p>E-mail: <strong>${options.account.email}</strong></p>
      <h2>Businesses</h2>
      ${options.businesses.length === 0
        ? html`<p class="muted">You are not a member of any business.</p>`
        : options.businesses.map(({ business, role, clients: list, more }) =>
          html`
            <section aria-labelledby="business-${business.id}">
              <h3 id="business-${business.id}">${business.name}</h3>
              <p>Your role: ${role}</p>
              ${clients(list)}
              ${more}
            </section>
          `
        )}
      <p><a href="/sign-up">Add another business</a></p>
    `,
    { email: options.account.email, signOutCsrf: options.signOutCsrf },
  );
}

export function errorPage(title: string, message: string): string {
  return _layout(title, notice("error", message));
}
