/**
 * GET {auth_url}/api/auth/oauth2/authorize: validates the request, sends the human to sign
 * in (returning to this same request), then starts a server-side transaction and shows the
 * business choice (skipped when there is one) or the consent page. No CORS, ever.
 */
import type { Accounts, Sessions } from "../accounts/model.ts";
import type { UpstreamSignIns } from "./consent_continuation.ts";
import type { Config } from "../config/config.ts";
import type { Handler } from "../http/handler.ts";
import { privatePage } from "../http/responses.ts";
import type { Store } from "../store/store.ts";
import { authorizationRedirect, parseAuthorizationRequest } from "./authorization_request.ts";
import type { Clients } from "./clients.ts";
import {
  authorizationErrorPage,
  chooseBusinessPage,
  consentPage,
  consentPageCsp,
} from "./consent_pages.ts";
import { heldScopes } from "./grants.ts";
import { issuerOf, OAUTH_PATHS } from "./issuer.ts";
import type { ScopeCatalogue } from "./scopes.ts";
import type { ReturnDescriber } from "../ui/auth_pages.ts";
import { html } from "../ui/html.ts";
import { startTransaction, type Transaction } from "./transactions.ts";

export interface AuthorizeDeps {
  readonly config: Pick<Config, "authUrl" | "apiUrl">;
  readonly store: Store;
  readonly now: () => number;
  readonly clients: Clients;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly scopes: ScopeCatalogue;
  /** Per-person upstreams a consent may have to connect before the agent gets its code. */
  readonly upstreamSignIns?: UpstreamSignIns | undefined;
}

/** The CSRF purpose of the business and consent forms. */
export const CONSENT_CSRF_PURPOSE = "oauth-consent";

const NO_STORE = { "Cache-Control": "no-store" };

/** On the sign-in page reached from an agent: which application waits, and what comes next. */
export function describeAuthorization(deps: AuthorizeDeps): ReturnDescriber {
  return async (returnTo) => {
    if (returnTo.pathname !== OAUTH_PATHS.authorize) return null;
    const parsed = await parseAuthorizationRequest(returnTo.searchParams, deps);
    if (parsed.kind !== "ok") return null;
    const name = parsed.request.client.clientName;
    return html`<p><strong>${name ?? "An unnamed application"}</strong> asks to work with one of
      your businesses. After you sign in, you choose which business and exactly what it may do;
      nothing is shared before you allow it.</p>`;
  };
}

export function createAuthorizeEndpoint(deps: AuthorizeDeps): Handler {
  const issuer = issuerOf(deps.config);
  return async (request) => {
    const url = new URL(request.url);
    const parsed = await parseAuthorizationRequest(url.searchParams, deps);
    if (parsed.kind === "fatal") {
      return privatePage(
        authorizationErrorPage(
          "This authorization request cannot be processed",
          parsed.description,
        ),
        400,
      );
    }
    if (parsed.kind === "redirect") {
      return authorizationRedirect(parsed.redirectUri, issuer, parsed.state, {
        error: parsed.error,
        error_description: parsed.description,
      }, 302);
    }
    const req = parsed.request;
    const fail = (error: string, description: string) =>
      authorizationRedirect(req.redirectUri, issuer, req.state, {
        error,
        error_description: description,
      }, 302);

    const session = await deps.sessions.current(request);
    if (!session) {
      if (req.promptNone) return fail("login_required", "The user is not signed in");
      return new Response(null, {
        status: 302,
        headers: { Location: deps.sessions.signInUrl(url.pathname + url.search), ...NO_STORE },
      });
    }
    // Consent is asked every time: nothing is granted silently.
    if (req.promptNone) return fail("consent_required", "The user must consent interactively");

    const businesses = await deps.accounts.listBusinessesOf(session.account.id);
    if (businesses.length === 0) {
      return fail("access_denied", "The signed-in account has no business");
    }
    const only = businesses.length === 1 ? businesses[0]! : null;
    const txn: Transaction = {
      clientId: req.client.clientId,
      clientName: req.client.clientName,
      registration: req.client.registration,
      redirectUri: req.redirectUri,
      state: req.state,
      codeChallenge: req.codeChallenge,
      resource: req.resource,
      scopes: req.scopes,
      nonce: req.nonce,
      accountId: session.account.id,
      sessionId: session.id,
      businessId: only?.business.id ?? null,
      createdAt: deps.now(),
    };
    const txnId = await startTransaction(deps.store, txn);
    const csrf = await deps.sessions.csrfToken(session, CONSENT_CSRF_PURPOSE);
    const body = only
      ? consentPage({
        txn,
        txnId,
        csrf,
        action: OAUTH_PATHS.consent,
        business: only.business,
        role: only.role,
        scopes: deps.scopes,
        held: await heldScopes(deps.store, session.account.id, only.business.id, txn.clientId),
      })
      : chooseBusinessPage({ txn, txnId, csrf, action: OAUTH_PATHS.consent, businesses });
    return privatePage(body, 200, {
      "Content-Security-Policy": consentPageCsp(txn.redirectUri),
    });
  };
}
