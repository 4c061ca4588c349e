/**
 * POST /account/members on {auth_url}: an owner invites someone to a business from the form on
 * /account (e-mail and role). The membership, the invitation record with its mail (the one
 * `admin add-member` and an approved `change_access` send, invitations.ts) and the audit entry
 * are one commit; the page says whether the mail went out. Anyone but an owner of the business
 * reads "not found".
 */
import * as v from "valibot";
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { INVITE_CSRF_PURPOSE } from "../../accounts/routes.ts";
import { EmailSchema, RoleSchema } from "../../accounts/schemas.ts";
import { seeOther, signedInPage } from "../../accounts/signed_in.ts";
import { HttpError } from "../../http/errors.ts";
import { readForm } from "../../http/form.ts";
import { privatePage } from "../../http/responses.ts";
import type { MethodHandlers } from "../../http/router.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Store } from "../../store/store.ts";
import { authPage } from "../../ui/auth_pages.ts";
import { linkButton, notice } from "../../ui/components.ts";
import { html } from "../../ui/html.ts";
import type { AuditLog } from "../domain/audit.ts";
import { recordInvitation, roleWithArticle } from "../domain/invitations.ts";
import type { Workspace } from "../domain/workspace.ts";

export interface InviteRoutesDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly workspace: Pick<Workspace, "invitations">;
  readonly mailer: Pick<MailOutbox, "record" | "dispatch">;
  readonly audit: Pick<AuditLog, "entry">;
  readonly now: () => number;
  readonly authUrl: string;
}

// A missing field reads as empty, so the message is "… is required", not a type error.
const InviteFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  business: v.optional(v.pipe(v.string(), v.maxLength(100, "business is too long")), ""),
  email: v.optional(EmailSchema, ""),
  role: v.optional(RoleSchema, "member"),
});

const NOT_FOUND = "There is no such business among those you own.";

function _page(email: string, title: string, main: ReturnType<typeof html>, status = 200) {
  return privatePage(
    authPage({
      title,
      signedIn: { email },
      main: html`${main}<p class="actions">${
        linkButton("/account", "Back to your account", "primary")
      }</p>`,
    }),
    status,
  );
}

export function createInviteRoutes(deps: InviteRoutesDeps): { readonly members: MethodHandlers } {
  const { store, accounts, sessions } = deps;

  const invite = async (request: Request, session: Session): Promise<Response> => {
    const { email: ownEmail, id: accountId } = session.account;
    const parsed = v.safeParse(InviteFormSchema, await readForm(request));
    if (!parsed.success) throw new HttpError(400, parsed.issues[0].message);
    const form = parsed.output;
    if (!(await sessions.verifyCsrf(session, INVITE_CSRF_PURPOSE, form.csrf))) {
      throw new HttpError(
        403,
        "This form has expired or did not come from this site. Please submit it again.",
      );
    }
    const membership = await accounts.getMembership(accountId, form.business);
    const business = membership === null ? null : await accounts.getBusiness(form.business);
    if (membership?.role !== "owner" || business === null) throw new HttpError(404, NOT_FOUND);
    const plan = await accounts.planMembershipChange(business.id, {
      change: "invite",
      email: form.email,
      role: form.role,
    });
    if (!plan.ok) throw new HttpError(409, plan.reason);
    const invitation = recordInvitation(deps, {
      businessId: business.id,
      businessName: business.name,
      email: form.email,
      role: form.role,
      addedBy: `${ownEmail}, an owner of "${business.name}"`,
    });
    const entry = deps.audit.entry({
      businessId: business.id,
      accountId,
      actor: "human",
      clientId: null,
      action: "invite_member",
      summary: `invited ${form.email} as ${roleWithArticle(form.role)} on /account`,
      gateId: null,
    });
    if (!(await store.commit(plan.checks, [...plan.mutations, ...invitation.mutations, entry]))) {
      throw new HttpError(409, "The members changed meanwhile; please try again.");
    }
    const sent = await deps.mailer.dispatch(invitation.delivery);
    const mail = sent === "sent"
      ? "We mailed them the invitation."
      : sent === "failed"
      ? "The mail server refused the invitation; the operator can see why in the outbox."
      : "The invitation is queued: it goes out when the mail server answers.";
    return _page(
      ownEmail,
      "Invitation sent",
      notice(
        sent === "failed" ? "warning" : "success",
        html`<p><strong>${form.email}</strong> is now ${
          roleWithArticle(form.role)
        } of ${business.name}. ${mail} They sign in with that address; there is nothing to
        accept.</p>`,
        "invited",
      ),
    );
  };

  return {
    members: {
      POST: signedInPage(
        sessions,
        invite,
        (session, error) =>
          authPage({
            title: error.status === 404 ? "Business not found" : "Not invited",
            signedIn: { email: session.account.email },
            main: html`${notice("error", error.message, "form-error")}
              <p><a href="/account">Back to your account</a></p>`,
          }),
        // A signed-out post has no page to come back to: to the account, after signing in.
        () => seeOther(sessions.signInUrl("/account")),
      ),
    },
  };
}
