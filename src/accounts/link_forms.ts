// The sign-up and sign-in forms of {auth_url}: one handler, each with its schema and its mail.
// A refused post shows the form again with what was entered and why (403 for the CSRF token,
// 400 for the fields, 429 over the mail budget); an accepted one, the same "check your e-mail"
// page whether or not the address has an account.
import * as v from "valibot";
import type { Config } from "../config/config.ts";
import { minutesOf } from "../count_words.ts";
import { readForm } from "../http/form.ts";
import { privatePage } from "../http/responses.ts";
import type { MethodHandlers } from "../http/router.ts";
import type { ReturnDescriber } from "../ui/auth_pages.ts";
import type { Html } from "../ui/html.ts";
import type { EmailLinks, LinkRequestOutcome } from "./email_links.ts";
import type { FormCsrf } from "./form_csrf.ts";
import { CSRF_FAILED, guarded, withFormCsrf } from "./page_responses.ts";
import { checkMailPage, type LinkFormPage, signInPage, signUpPage } from "./pages.ts";
import { BusinessNameSchema, EmailSchema } from "./schemas.ts";
import { safeReturnTo } from "./sessions.ts";

export interface LinkFormsDeps {
  readonly config: Pick<Config, "authUrl">;
  readonly emailLinks: EmailLinks;
  readonly csrf: FormCsrf;
  /** Each part that sends people to sign in says what waits behind its own paths. */
  readonly describeReturn?: readonly ReturnDescriber[] | undefined;
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

interface LinkForm<S extends v.GenericSchema<unknown, { email: string }>> {
  readonly purpose: "sign-up" | "sign-in";
  readonly schema: S;
  readonly page: (options: LinkFormPage) => string;
  readonly send: (
    fields: v.InferOutput<S>,
    clientAddress: string,
    returnTo: string,
  ) => Promise<LinkRequestOutcome>;
}

/** /sign-up and /sign-in. */
export function linkForms(
  deps: LinkFormsDeps,
): { readonly signUp: MethodHandlers; readonly signIn: MethodHandlers } {
  const { emailLinks } = deps;
  return {
    signUp: _linkForm(deps, {
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
    signIn: _linkForm(deps, {
      purpose: "sign-in",
      schema: SignInFormSchema,
      page: signInPage,
      send: (form, clientAddress, returnTo) =>
        emailLinks.requestSignIn({ email: form.email, clientAddress, returnTo }),
    }),
  };
}

function _linkForm<S extends v.GenericSchema<unknown, { email: string }>>(
  deps: LinkFormsDeps,
  form: LinkForm<S>,
): MethodHandlers {
  const { csrf } = deps;
  return {
    GET: guarded(async (request) => {
      const query = new URL(request.url).searchParams;
      const returnTo = safeReturnTo(query.get("return_to"));
      const waiting = await _waitingBehind(deps, returnTo);
      // Where sign-out lands: the page says it happened.
      const signedOut = query.has("signed_out");
      return withFormCsrf(
        csrf,
        request,
        form.purpose,
        (token) => form.page({ csrf: token, returnTo, waiting, signedOut }),
      );
    }),
    POST: guarded(async (request, context) => {
      const entered = await readForm(request);
      const returnTo = safeReturnTo(entered.return_to);
      const waiting = await _waitingBehind(deps, returnTo);
      const again = (error: string, status: number, headers: Record<string, string> = {}) =>
        withFormCsrf(
          csrf,
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
      return privatePage(checkMailPage(parsed.output.email, form.purpose));
    }),
  };
}

/** What the first part that knows the way back says waits behind it, if any. */
async function _waitingBehind(deps: LinkFormsDeps, returnTo: string): Promise<Html | null> {
  const url = new URL(returnTo, deps.config.authUrl);
  for (const describe of deps.describeReturn ?? []) {
    const described = await describe(url);
    if (described !== null) return described;
  }
  return null;
}
