// The people's pages of {auth_url}: the bare origin, the sign-up and sign-in forms
// (link_forms.ts), the e-mailed link's confirmation (link_confirmation.ts), sign-out and /account
// with the authorizations it lists and revokes.
import * as v from "valibot";
import type { Config } from "../config/config.ts";
import { readForm } from "../http/form.ts";
import { privatePage } from "../http/responses.ts";
import type { MethodHandlers } from "../http/router.ts";
import { OWN_SCRIPTS_CSP } from "../http/security_headers.ts";
import type { ReturnDescriber, ReturnTargets } from "../ui/auth_pages.ts";
import { notice } from "../ui/components.ts";
import { type Html, html } from "../ui/html.ts";
import type { EmailLinks } from "./email_links.ts";
import { createFormCsrf } from "./form_csrf.ts";
import { linkConfirmation } from "./link_confirmation.ts";
import { linkForms } from "./link_forms.ts";
import type { Accounts, Role, Session, Sessions } from "./model.ts";
import { CSRF_FAILED, guarded } from "./page_responses.ts";
import {
  accountPage,
  type AuthorizedClientView,
  type BusinessExtras,
  errorPage,
  signOutPage,
  welcomeNotice,
} from "./pages.ts";
import { seeOther } from "./signed_in.ts";

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

const CsrfFormSchema = v.object({ csrf: v.optional(v.string(), "") });
const RevokeFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  grant: v.optional(v.string(), ""),
});

/** The purpose of the owners' invitation form's token (workspace/pages/invite_routes.ts). */
export const INVITE_CSRF_PURPOSE = "invite-member";

export function createAccountRoutes(deps: AccountRoutesDeps): AccountRoutes {
  const { config, sessions, accounts, emailLinks, grants, businessSection } = deps;
  const csrf = createFormCsrf(config);
  const forms = linkForms({ config, emailLinks, csrf, describeReturn: deps.describeReturn });

  const signOutFor = async (session: Session) => ({
    email: session.account.email,
    signOutCsrf: await sessions.csrfToken(session, "sign-out"),
  });

  const showAccount = async (session: Session, outcome?: Html, status = 200) => {
    const [memberships, clients] = await Promise.all([
      accounts.listBusinessesOf(session.account.id),
      grants.listForAccount(session.account.id),
    ]);
    return privatePage(
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

  return {
    // Nothing lives at the bare origin: a signed-in visitor goes to their account, anyone else
    // to sign in (which leads there too).
    home: {
      GET: guarded(async (request) =>
        seeOther(`${config.authUrl}${(await sessions.current(request)) ? "/account" : "/sign-in"}`)
      ),
    },

    signUp: forms.signUp,
    signIn: forms.signIn,
    verify: linkConfirmation({
      config,
      accounts,
      sessions,
      emailLinks,
      csrf,
      returnTargets: deps.returnTargets,
    }),

    signOut: {
      GET: guarded(async (request) => {
        const session = await sessions.current(request);
        if (!session) return seeOther(`${config.authUrl}/sign-in`);
        return privatePage(signOutPage({
          email: session.account.email,
          csrf: await sessions.csrfToken(session, "sign-out"),
        }));
      }),
      POST: guarded(async (request) => {
        const session = await sessions.current(request);
        const form = await readForm(request);
        if (!session) return seeOther(`${config.authUrl}/sign-in`);
        const parsed = v.safeParse(CsrfFormSchema, form);
        if (
          !parsed.success || !(await sessions.verifyCsrf(session, "sign-out", parsed.output.csrf))
        ) {
          return privatePage(errorPage("Request refused", CSRF_FAILED), 403);
        }
        return seeOther(`${config.authUrl}/sign-in?signed_out`, {
          "Set-Cookie": await sessions.end(session),
        });
      }),
    },

    account: {
      GET: guarded(async (request) => {
        const session = await sessions.current(request);
        if (!session) return seeOther(sessions.signInUrl("/account"));
        // After a sign-up (the query only adds words: it changes nothing).
        const welcome = new URL(request.url).searchParams.has("welcome");
        return await showAccount(session, welcome ? welcomeNotice() : undefined);
      }),
      POST: guarded(async (request) => {
        const session = await sessions.current(request);
        const form = await readForm(request);
        if (!session) return seeOther(sessions.signInUrl("/account"));
        const parsed = v.safeParse(RevokeFormSchema, form);
        if (
          !parsed.success || !(await sessions.verifyCsrf(session, "revoke", parsed.output.csrf))
        ) {
          return privatePage(errorPage("Request refused", CSRF_FAILED), 403);
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
