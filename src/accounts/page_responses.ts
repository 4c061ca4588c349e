// How the people's pages of {auth_url} answer besides privatePage (http/responses.ts): a client
// error as a page with its status, and a form shown before sign-in with its CSRF token (and the
// cookie it is bound to, the first time).
import { withHtmlErrors } from "../http/errors.ts";
import type { Handler } from "../http/handler.ts";
import { privatePage } from "../http/responses.ts";
import type { FormCsrf } from "./form_csrf.ts";
import { errorPage } from "./pages.ts";

export const CSRF_FAILED =
  "This form has expired or did not come from this site. Please submit it again.";

/** Client errors (bad body, wrong type) become a page with their status, never a 500. */
export function guarded(handler: Handler): Handler {
  return withHtmlErrors(handler, (error) => errorPage("Request refused", error.message));
}

/** A page whose form carries a token of `purpose` (form_csrf.ts). */
export async function withFormCsrf(
  csrf: FormCsrf,
  request: Request,
  purpose: string,
  render: (token: string) => string,
  status = 200,
  headers: Record<string, string> = {},
): Promise<Response> {
  const issued = await csrf.issue(request, purpose);
  const cookie: Record<string, string> = issued.setCookie ? { "Set-Cookie": issued.setCookie } : {};
  return privatePage(render(issued.token), status, { ...headers, ...cookie });
}
