// /sign-in/verify: the e-mailed link's page and its button. GET only shows the button, so that
// prefetching scanners never use the link; the POST signs in (creating the account and business
// of a sign-up link) with a fresh session, and goes on where the person was going.
import * as v from "valibot";
import type { Config } from "../config/config.ts";
import { readForm } from "../http/form.ts";
import { privatePage } from "../http/responses.ts";
import type { MethodHandlers } from "../http/router.ts";
import { cspWithFormTargets } from "../http/security_headers.ts";
import type { ReturnTargets } from "../ui/auth_pages.ts";
import { sameBusinessName } from "./business_names.ts";
import type { EmailLinks, LinkUse } from "./email_links.ts";
import type { FormCsrf } from "./form_csrf.ts";
import type { Account, Accounts, Business, Sessions } from "./model.ts";
import { CSRF_FAILED, guarded, withFormCsrf } from "./page_responses.ts";
import { confirmLinkPage, deadLinkPage, errorPage, supersededLinkPage } from "./pages.ts";
import { safeReturnTo } from "./sessions.ts";
import { seeOther } from "./signed_in.ts";

export interface LinkConfirmationDeps {
  readonly config: Pick<Config, "authUrl">;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly emailLinks: EmailLinks;
  readonly csrf: FormCsrf;
  /** Each part whose paths lead on to another origin says where (see ReturnTargets). */
  readonly returnTargets?: readonly ReturnTargets[] | undefined;
}

const ConfirmFormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  token: v.optional(v.string(), ""),
});

const PURPOSE = "sign-in-verify";

/** What a sign-up link may do (`_signUpOutcome`). */
type SignUpOutcome =
  | { readonly kind: "create" }
  | { readonly kind: "exists"; readonly account: Account; readonly business: Business }
  | { readonly kind: "superseded" };

export function linkConfirmation(deps: LinkConfirmationDeps): MethodHandlers {
  const { accounts, sessions, emailLinks, csrf } = deps;
  return {
    GET: guarded(async (request) => {
      const token = new URL(request.url).searchParams.get("token") ?? "";
      const use = await emailLinks.peek(token);
      // 410: the link worked once and never will again (used, expired, or never issued:
      // which one is not told).
      if (!use) return privatePage(deadLinkPage(), 410);
      const { record } = use;
      const signUp = record.kind === "sign_up" ? await _signUpOutcome(accounts, use) : null;
      if (record.kind === "sign_up" && signUp?.kind === "superseded") {
        return privatePage(supersededLinkPage(record.businessName), 410);
      }
      return withFormCsrf(
        csrf,
        request,
        PURPOSE,
        (csrfToken) =>
          confirmLinkPage({
            token,
            csrf: csrfToken,
            email: record.email,
            ...(record.kind === "sign_up" ? { businessName: record.businessName } : {}),
            ...(signUp?.kind === "exists" ? { existing: signUp.business } : {}),
          }),
        200,
        await _confirmationHeaders(deps, record.returnTo),
      );
    }),
    POST: guarded(async (request) => {
      const form = await readForm(request);
      const parsed = v.safeParse(ConfirmFormSchema, form);
      if (!parsed.success) return privatePage(deadLinkPage(), 400);
      if (!(await csrf.verify(request, PURPOSE, parsed.output.csrf))) {
        return privatePage(errorPage("Request refused", CSRF_FAILED), 403);
      }
      const use = await emailLinks.consume(parsed.output.token);
      if (!use) return privatePage(deadLinkPage(), 410);
      const { record } = use;
      let account: Account | null;
      let created = false;
      if (record.kind === "sign_up") {
        const outcome = await _signUpOutcome(accounts, use);
        if (outcome.kind === "superseded") {
          return privatePage(supersededLinkPage(record.businessName), 410);
        }
        if (outcome.kind === "exists") account = outcome.account;
        else {
          account =
            (await accounts.createAccountWithBusiness(record.email, record.businessName)).account;
          created = true;
        }
      } else account = await accounts.findAccountByEmail(record.email);
      if (!account) return privatePage(deadLinkPage(), 400);
      // A fresh session id on every sign-in (no fixation); a previous session ends here.
      const previous = await sessions.current(request);
      if (previous) await sessions.end(previous);
      const cookie = await sessions.start(account.id);
      const returnTo = safeReturnTo(record.returnTo);
      // A new business is welcomed on /account with how to connect an agent to it; an
      // interrupted authorization goes on where it was.
      const next = created && returnTo === "/account" ? "/account?welcome" : returnTo;
      return seeOther(`${deps.config.authUrl}${next}`, { "Set-Cookie": cookie });
    }),
  };
}

/**
 * What a sign-up link may do: create its business; only sign in, when the account already
 * owns a business of that name (the same sign-up twice); or nothing, when a later sign-up
 * link for that address and name was sent (only the newest creates).
 */
async function _signUpOutcome(accounts: Accounts, use: LinkUse): Promise<SignUpOutcome> {
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
}

/** The confirmation's CSP: its form's redirects may reach where the way back leads on to. */
async function _confirmationHeaders(
  deps: LinkConfirmationDeps,
  returnTo: string,
): Promise<Record<string, string>> {
  const url = new URL(safeReturnTo(returnTo), deps.config.authUrl);
  const targets: string[] = [];
  for (const targetsOf of deps.returnTargets ?? []) targets.push(...await targetsOf(url));
  return targets.length === 0 ? {} : { "Content-Security-Policy": cspWithFormTargets(targets) };
}
