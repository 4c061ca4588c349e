import * as v from "valibot";
import { withHtmlErrors } from "../http/errors.ts";
import type { Handler } from "../http/handler.ts";
import { htmlResponse } from "../http/responses.ts";
import { cspWithFormTargets } from "../http/security_headers.ts";
import type { MethodHandlers } from "../http/router.ts";
import { createFormCsrf } from "./form_csrf.ts";
import { readForm } from "../http/form.ts";
import type { ReturnDescriber, ReturnTargets } from "../ui/auth_pages.ts";
import { notice } from "../ui/components.ts";
import { type Html, html } from "../ui/html.ts";
import type { Account, Business, Role, Session } from "./model.ts";
import {
  accountPage,
  type AuthorizedClientView,
  type BusinessExtras,
  checkMailPage,
  confirmLinkPage,
  deadLinkPage,
  errorPage,
  type LinkFormPage,
  signInPage,
  signOutPage,
  signUpPage,
  supersededLinkPage,
  welcomeNotice,
} from "./pages.ts";
import { OWN_SCRIPTS_CSP } from "../http/security_headers.ts";
import { BusinessNameSchema, EmailSchema } from "./schemas.ts";
import type { Config } from "../config/config.ts";
import type { EmailLinks, LinkRequestOutcome, LinkUse } from "./email_links.ts";
import { sameBusinessName } from "./business_names.ts";
import type { Accounts, Sessions } from "./model.ts";
import { safeReturnTo } from "./sessions.ts";
import { minutesOf } from "../count_words.ts";

/**
 * The clients an account authorized, as the OAuth records know them. The authorization
 * server's grant records provide it (auth_site.ts); /account lists and revokes through it.
 */
export interface AccountGrants {
  listForAccount(
    accountId: string,
  ): Promise<readonly (AuthorizedClientView & { readonly businessId: string })[]>;
  /**
   * Revokes the grant if it belongs to the account and says whose it was; null when it does not
   * exist or is not the account's.
   */
  revokeForAccount(
    accountId: string,
    grantId: string,
  ): Promise<{ readonly clientName: string; readonly businessId: string } | null>;
}

/** What other parts add to each business on /account (the workspace's, the connections'). */
export type AccountBusinessSection = (
  businessId: string,
  role: Role,
  accountId: string,
) => Promise<BusinessExtras>;

export interface AccountRoutesDeps {
  /**
   * `authUrl` for redirects (the cookies' names and attributes follow it); `apiUrl` for the
   * MCP address /account gives people for their agents.
   */
  readonly config: Pick<Config, "authUrl" | "apiUrl">;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly emailLinks: EmailLinks;
  readonly grants: AccountGrants;
  readonly businessSection: AccountBusinessSection;
  /** Each part that sends people to sign in says what waits behind its own paths. */
  readonly describeReturn?: readonly ReturnDescriber[];
  /** Each part whose paths lead on to another origin says where (see ReturnTargets). */
  readonly returnTargets?: readonly ReturnTargets[];
}

/** The people's pages of {auth_url} (auth_site.ts maps the paths). */
export interface AccountRoutes {
  /** /: people arriving at {auth_url} itself. */
  readonly home: MethodHandlers;
  /** /sign-up */
  readonly signUp: MethodHandlers;
  /** /sign-in */
  readonly signIn: MethodHandlers;
  /** /sign-in/verify: the e-mailed link's page, and its button. */
  readonly verify: MethodHandlers;
  /** /sign-out */
  readonly signOut: MethodHandlers;
  /** /account */
  readonly account: MethodHandlers;
}

// A missing field reads as empty, so the message is "… is required", not a type error.
const SignUpFormSchema = v.object({
  csrf: v.string(),
  email: v.optional(EmailSchema, ""),
  business: v.optional(BusinessNameSchema, ""),
  return_to: v.optional(v.string(), "/account"),
});
const SignInFormSchema = v.object({
  csrf: v.string(),
  email: v.optional(EmailSchema, ""),
  return_to: v.optional(v.string(), "/account"),
});
const ConfirmFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  token: v.optional(v.string(), ""),
});
const CsrfFormSchema = v.object({ csrf: v.optional(v.string(), "") });
const RevokeFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  grant: v.optional(v.string(), ""),
});

/** The purpose of the owners' invitation form's token (workspace/pages/invite_routes.ts). */
export const INVITE_CSRF_PURPOSE = "invite-member";

const CSRF_FAILED = "This form has expired or did not come from this site. Please submit it again.";

/** Pages carry one-time tokens and personal data: never cached. */
function _page(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return htmlResponse(body, { status, headers: { "Cache-Control": "no-store", ...headers } });
}

function _redirect(location: string, headers: Record<string, string> = {}): Response {
  return new Response(null, {
    status: 303,
    headers: { Location: location, "Cache-Control": "no-store", ...headers },
  });
}

/** Client errors (bad body, wrong type) become a page with their status, never a 500. */
function _guard(handler: Handler): Handler {
  return withHtmlErrors(handler, (error) => errorPage("Request refused", error.message));
}

export function createAccountRoutes(deps: AccountRoutesDeps): AccountRoutes {
  const { config, sessions, accounts, emailLinks, grants, businessSection } = deps;
  const csrf = createFormCsrf(config);

  const withCsrf = async (
    request: Request,
    purpose: string,
    render: (token: string) => string,
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    const issued = await csrf.issue(request, purpose);
    const cookie: Record<string, string> = issued.setCookie
      ? { "Set-Cookie": issued.setCookie }
      : {};
    return _page(render(issued.token), status, { ...headers, ...cookie });
  };

  const returnToOf = (request: Request) =>
    safeReturnTo(new URL(request.url).searchParams.get("return_to"));

  const waitingBehind = async (returnTo: string): Promise<Html | null> => {
    const url = new URL(returnTo, config.authUrl);
    for (const describe of deps.describeReturn ?? []) {
      const described = await describe(url);
      if (described !== null) return described;
    }
    return null;
  };

  /** The confirmation's CSP: its form's redirects may reach where the way back leads on to. */
  const confirmationHeaders = async (returnTo: string): Promise<Record<string, string>> => {
    const url = new URL(safeReturnTo(returnTo), config.authUrl);
    const targets: string[] = [];
    for (const targetsOf of deps.returnTargets ?? []) targets.push(...await targetsOf(url));
    return targets.length === 0 ? {} : { "Content-Security-Policy": cspWithFormTargets(targets) };
  };

  /**
   * What a sign-up link may do: create its business; only sign in, when the account already
   * owns a business of that name (the same sign-up twice); or nothing, when a later sign-up
   * link for that address and name was sent (only the newest creates).
   */
  const signUpOutcome = async (use: LinkUse): Promise<
    | { kind: "create" }
    | { kind: "exists"; account: Account; business: Business }
    | { kind: "superseded" }
  > => {
    const { record } = use;
    if (record.kind !== "sign_up") return { kind: "create" };
    const account = await accounts.findAccountByEmail(record.email);
    const owned = account === null ? [] : await accounts.listBusinessesOf(account.id);
    const same = owned.find(({ business, role }) =>
      role === "owner" && sameBusinessName(business.name, record.businessName)
    );
    if (account !== null && same !== undefined) {
      return { kind: "exists", account, business: same.business };
    }
    return use.superseded ? { kind: "superseded" } : { kind: "create" };
  };

  const signOutFor = async (session: Session) => ({
    email: session.account.email,
    signOutCsrf: await sessions.csrfToken(session, "sign-out"),
  });

  const showAccount = async (session: Session, outcome?: Html, status = 200) => {
    const [memberships, clients] = await Promise.all([
      accounts.listBusinessesOf(session.account.id),
      grants.listForAccount(session.account.id),
    ]);
    return _page(
      accountPage({
        account: session.account,
        ...(await signOutFor(session)),
        revokeCsrf: await sessions.csrfToken(session, "revoke"),
        inviteCsrf: await sessions.csrfToken(session, INVITE_CSRF_PURPOSE),
        businesses: await Promise.all(memberships.map(async ({ business, role }) => ({
          business,
          role,
          clients: clients.filter((c) => c.businessId === business.id),
          members: role === "owner"
            ? (await accounts.listMembers(business.id))
              .map((m) => ({ email: m.account.email, role: m.role }))
            : null,
          extras: await businessSection(business.id, role, session.account.id),
        }))),
        apiUrl: config.apiUrl,
        ...(outcome === undefined ? {} : { notice: outcome }),
      }),
      status,
      // The copy buttons' script file; nothing inline.
      { "Content-Security-Policy": OWN_SCRIPTS_CSP },
    );
  };

  /**
   * The sign-up and sign-in forms: one handler, each with its schema and its mail. A refused
   * post shows the form again with what was entered and why (403 for the CSRF token, 400 for
   * the fields, 429 over the mail budget); an accepted one, the same "check your e-mail" page
   * whether or not the address has an account.
   */
  const linkForm = <S extends v.GenericSchema<unknown, { email: string }>>(form: {
    readonly purpose: "sign-up" | "sign-in";
    readonly schema: S;
    readonly page: (options: LinkFormPage) => string;
    readonly send: (
      fields: v.InferOutput<S>,
      clientAddress: string,
      returnTo: string,
    ) => Promise<LinkRequestOutcome>;
  }): MethodHandlers => ({
    GET: _guard(async (request) => {
      const returnTo = returnToOf(request);
      const waiting = await waitingBehind(returnTo);
      // Where sign-out lands: the page says it happened.
      const signedOut = new URL(request.url).searchParams.has("signed_out");
      return withCsrf(
        request,
        form.purpose,
        (token) => form.page({ csrf: token, returnTo, waiting, signedOut }),
      );
    }),
    POST: _guard(async (request, context) => {
      const entered = await readForm(request);
      const returnTo = safeReturnTo(entered.return_to);
      const waiting = await waitingBehind(returnTo);
      const again = (error: string, status: number, headers: Record<string, string> = {}) =>
        withCsrf(
          request,
          form.purpose,
          (token) => form.page({ csrf: token, returnTo, entered, error, waiting }),
          status,
          headers,
        );
      if (!(await csrf.verify(request, form.purpose, entered.csrf ?? ""))) {
        return again(CSRF_FAILED, 403);
      }
      const parsed = v.safeParse(form.schema, entered);
      if (!parsed.success) return again(parsed.issues.map((i) => i.message).join("; "), 400);
      const outcome = await form.send(parsed.output, context.clientAddress, returnTo);
      if (!outcome.sent) {
        const seconds = outcome.retryAfterSeconds;
        return again(
          `Too many requests for this address. Try again in ${minutesOf(seconds)}.`,
          429,
          { "Retry-After": String(seconds) },
        );
      }
      return _page(checkMailPage(parsed.output.email, form.purpose));
    }),
  });

  return {
    // Nothing lives at the bare origin: a signed-in visitor goes to their account, anyone else
    // to sign in (which leads there too).
    home: {
      GET: _guard(async (request) =>
        _redirect(`${config.authUrl}${(await sessions.current(request)) ? "/account" : "/sign-in"}`)
      ),
    },

    signUp: linkForm({
      purpose: "sign-up",
      schema: SignUpFormSchema,
      page: signUpPage,
      send: (form, clientAddress, returnTo) =>
        emailLinks.requestSignUp({
          email: form.email,
          businessName: form.business,
          clientAddress,
          returnTo,
        }),
    }),

    signIn: linkForm({
      purpose: "sign-in",
      schema: SignInFormSchema,
      page: signInPage,
      send: (form, clientAddress, returnTo) =>
        emailLinks.requestSignIn({ email: form.email, clientAddress, returnTo }),
    }),

    verify: {
      // GET only shows the button: prefetching scanners never use the link.
      GET: _guard(async (request) => {
        const token = new URL(request.url).searchParams.get("token") ?? "";
        const use = await emailLinks.peek(token);
        // 410: the link worked once and never will again (used, expired, or never issued:
        // which one is not told).
        if (!use) return _page(deadLinkPage(), 410);
        const { record } = use;
        const signUp = record.kind === "sign_up" ? await signUpOutcome(use) : null;
        if (record.kind === "sign_up" && signUp?.kind === "superseded") {
          return _page(supersededLinkPage(record.businessName), 410);
        }
        return withCsrf(
          request,
          "sign-in-verify",
          (csrfToken) =>
            confirmLinkPage({
              token,
              csrf: csrfToken,
              email: record.email,
              ...(record.kind === "sign_up" ? { businessName: record.businessName } : {}),
              ...(signUp?.kind === "exists" ? { existing: signUp.business } : {}),
            }),
          200,
          await confirmationHeaders(record.returnTo),
        );
      }),
      POST: _guard(async (request) => {
        const form = await readForm(request);
        const parsed = v.safeParse(ConfirmFormSchema, form);
        if (!parsed.success) return _page(deadLinkPage(), 400);
        if (!(await csrf.verify(request, "sign-in-verify", parsed.output.csrf))) {
          return _page(errorPage("Request refused", CSRF_FAILED), 403);
        }
        const use = await emailLinks.consume(parsed.output.token);
        if (!use) return _page(deadLinkPage(), 410);
        const { record } = use;
        let account: Account | null;
        let created = false;
        if (record.kind === "sign_up") {
          const outcome = await signUpOutcome(use);
          if (outcome.kind === "superseded") {
            return _page(supersededLinkPage(record.businessName), 410);
          }
          if (outcome.kind === "exists") account = outcome.account;
          else {
            account =
              (await accounts.createAccountWithBusiness(record.email, record.businessName)).account;
            created = true;
          }
        } else account = await accounts.findAccountByEmail(record.email);
        if (!account) return _page(deadLinkPage(), 400);
        // A fresh session id on every sign-in (no fixation); a previous session ends here.
        const previous = await sessions.current(request);
        if (previous) await sessions.end(previous);
        const cookie = await sessions.start(account.id);
        const returnTo = safeReturnTo(record.returnTo);
        // A new business is welcomed on /account with how to connect an agent to it; an
        // interrupted authorization goes on where it was.
        const next = created && returnTo === "/account" ? "/account?welcome" : returnTo;
        return _redirect(`${config.authUrl}${next}`, { "Set-Cookie": cookie });
      }),
    },

    signOut: {
      GET: _guard(async (request) => {
        const session = await sessions.current(request);
        if (!session) return _redirect(`${config.authUrl}/sign-in`);
        return _page(signOutPage({
          email: session.account.email,
          csrf: await sessions.csrfToken(session, "sign-out"),
        }));
      }),
      POST: _guard(async (request) => {
        const session = await sessions.current(request);
        const form = await readForm(request);
        if (!session) return _redirect(`${config.authUrl}/sign-in`);
        const parsed = v.safeParse(CsrfFormSchema, form);
        if (
          !parsed.success || !(await sessions.verifyCsrf(session, "sign-out", parsed.output.csrf))
        ) {
          return _page(errorPage("Request refused", CSRF_FAILED), 403);
        }
        return _redirect(`${config.authUrl}/sign-in?signed_out`, {
          "Set-Cookie": await sessions.end(session),
        });
      }),
    },

    account: {
      GET: _guard(async (request) => {
        const session = await sessions.current(request);
        if (!session) return _redirect(sessions.signInUrl("/account"));
        // After a sign-up (the query only adds words: it changes nothing).
        const welcome = new URL(request.url).searchParams.has("welcome");
        return await showAccount(session, welcome ? welcomeNotice() : undefined);
      }),
      POST: _guard(async (request) => {
        const session = await sessions.current(request);
        const form = await readForm(request);
        if (!session) return _redirect(sessions.signInUrl("/account"));
        const parsed = v.safeParse(RevokeFormSchema, form);
        if (
          !parsed.success || !(await sessions.verifyCsrf(session, "revoke", parsed.output.csrf))
        ) {
          return _page(errorPage("Request refused", CSRF_FAILED), 403);
        }
        const revoked = await grants.revokeForAccount(session.account.id, parsed.output.grant);
        if (revoked === null) {
          return await showAccount(
            session,
            notice("warning", "Nothing to revoke: that authorization no longer exists."),
            404,
          );
        }
        const business = await accounts.getBusiness(revoked.businessId);
        return await showAccount(
          session,
          notice(
            "success",
            html`<p><strong>Access revoked.</strong> ${revoked.clientName} can no longer act for you
              in ${
              business?.name ?? "that business"
            }: its tokens stop working within seconds. To act for you
              again it would have to ask you to sign in and consent again.</p>`,
            "revoked",
          ),
        );
      }),
    },
  };
}
