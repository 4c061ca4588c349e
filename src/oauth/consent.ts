/**
 * POST {auth_url}/api/auth/oauth2/consent: the business choice and the consent decision.
 * Each post carries the transaction id and a CSRF token of the session; the decision
 * consumes the transaction, so a replay (or a second tab) fails.
 */
import { withHtmlErrors } from "../http/errors.ts";
import { readFormWithLists } from "../http/form.ts";
import type { Handler } from "../http/handler.ts";
import { privatePage } from "../http/responses.ts";
import { authorizationRedirect } from "./authorization_request.ts";
import { type AuthorizeDeps, CONSENT_CSRF_PURPOSE } from "./authorize.ts";
import { issueCode } from "./codes.ts";
import { holdConsent } from "./consent_continuation.ts";
import { authorizationErrorPage, consentPage, consentPageCsp } from "./consent_pages.ts";
import { heldScopes } from "./grants.ts";
import { issuerOf, OAUTH_PATHS } from "./issuer.ts";
import { chooseBusiness, consumeTransaction, findTransaction } from "./transactions.ts";

const NO_STORE = { "Cache-Control": "no-store" };

export function createConsentEndpoint(deps: AuthorizeDeps): Handler {
  const issuer = issuerOf(deps.config);
  const refuse = (status: number, title: string, message: string) =>
    privatePage(authorizationErrorPage(title, message), status);

  const handler: Handler = async (request) => {
    // One value per field, except `scope`: one per ticked box.
    const form = await readFormWithLists(request, ["scope"]);
    const { fields } = form;
    const session = await deps.sessions.current(request);
    if (!session) {
      return refuse(400, "You are signed out", "Your session ended before you answered.");
    }
    if (!await deps.sessions.verifyCsrf(session, CONSENT_CSRF_PURPOSE, fields.csrf ?? "")) {
      return refuse(403, "Request refused", "The form's security token is missing or wrong.");
    }
    const entry = await findTransaction(deps.store, fields.txn ?? "");
    if (
      !entry || entry.value.accountId !== session.account.id || entry.value.sessionId !== session.id
    ) {
      return refuse(
        400,
        "This request is no longer valid",
        "This authorization request has expired or was already answered.",
      );
    }
    const txn = entry.value;

    if (fields.decision === undefined) {
      // The business step.
      const chosen = fields.business;
      if (chosen === undefined) return refuse(400, "Bad request", "Choose a business.");
      if (txn.businessId !== null) {
        return refuse(400, "Bad request", "The business of this request is already chosen.");
      }
      const membership = await deps.accounts.getMembership(session.account.id, chosen);
      const business = membership ? await deps.accounts.getBusiness(chosen) : null;
      if (!membership || !business) {
        return refuse(403, "Request refused", "You are not a member of that business.");
      }
      if (!await chooseBusiness(deps.store, entry, chosen, deps.now())) {
        return refuse(409, "Request refused", "This request changed in another window.");
      }
      const csrf = await deps.sessions.csrfToken(session, CONSENT_CSRF_PURPOSE);
      return privatePage(
        consentPage({
          txn: { ...txn, businessId: chosen },
          txnId: fields.txn!,
          csrf,
          action: OAUTH_PATHS.consent,
          business,
          role: membership.role,
          scopes: deps.scopes,
          held: await heldScopes(deps.store, session.account.id, chosen, txn.clientId),
        }),
        200,
        { "Content-Security-Policy": consentPageCsp(txn.redirectUri) },
      );
    }

    // The decision.
    if (fields.decision !== "allow" && fields.decision !== "deny") {
      return refuse(400, "Bad request", 'decision must be "allow" or "deny".');
    }
    if (txn.businessId === null) return refuse(400, "Bad request", "Choose a business first.");
    if (fields.business !== undefined && fields.business !== txn.businessId) {
      return refuse(400, "Request refused", "The business cannot be changed at this step.");
    }
    if (!await consumeTransaction(deps.store, entry)) {
      return refuse(400, "This request is no longer valid", "This request was already answered.");
    }
    const back = (params: Record<string, string>) =>
      authorizationRedirect(txn.redirectUri, issuer, txn.state, params, 303);
    if (fields.decision === "deny") {
      return back({ error: "access_denied", error_description: "The user denied the request" });
    }
    const membership = await deps.accounts.getMembership(session.account.id, txn.businessId);
    if (!membership) {
      return back({ error: "access_denied", error_description: "Not a member of the business" });
    }
    const granted = [...new Set(form.lists.scope)];
    const foreign = granted.find((s) => !txn.scopes.includes(s));
    if (foreign !== undefined) {
      return refuse(400, "Request refused", `"${foreign}" was not requested by the application.`);
    }
    const ownerOnly = granted.find((s) => deps.scopes.ownerOnly(s));
    if (membership.role !== "owner" && ownerOnly !== undefined) {
      return refuse(403, "Request refused", `Only an owner can grant "${ownerOnly}".`);
    }
    // A step-up adds to what the client holds (the exchange merges them): Allow with nothing
    // new ticked still renews that; with nothing held either, nothing was granted.
    const held = await heldScopes(deps.store, session.account.id, txn.businessId, txn.clientId);
    if (granted.length === 0 && held.length === 0) {
      return back({ error: "access_denied", error_description: "No permission was granted" });
    }
    const binding = {
      clientId: txn.clientId,
      redirectUri: txn.redirectUri,
      codeChallenge: txn.codeChallenge,
      resource: txn.resource,
      // Catalogue order, as the token response reports the granted set.
      scopes: txn.scopes.filter((s) => granted.includes(s)),
      accountId: session.account.id,
      businessId: txn.businessId,
      nonce: txn.nonce,
      authTime: deps.now(),
    };
    const client = await deps.clients.lookup(txn.clientId);
    if (client.ok) await deps.clients.markUsed(client.client);
    // Granted upstreams that need the person's own account: connect them first, then back.
    const missing = await deps.upstreamSignIns?.missing(
      session.account.id,
      txn.businessId,
      binding.scopes,
    ) ?? [];
    if (deps.upstreamSignIns && missing.length > 0) {
      const held = await holdConsent(deps.store, {
        binding,
        redirectUri: txn.redirectUri,
        state: txn.state,
        sessionId: session.id,
      });
      return new Response(null, {
        status: 303,
        headers: {
          Location: deps.upstreamSignIns.connectPath(missing[0]!, txn.businessId, held),
          ...NO_STORE,
        },
      });
    }
    return back({ code: await issueCode(deps.store, binding) });
  };
  return withHtmlErrors(handler, (error) => authorizationErrorPage("Bad request", error.message));
}
