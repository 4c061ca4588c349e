/**
 * {auth_url}/connections/…: where a signed-in person connects (and disconnects) their own account
 * of a per-person upstream, the callback its authorization server sends them back to, and
 * Vestibule's own client metadata document (our client id where the server accepts one).
 * Reached from /account, from an agent's tool error, or from a consent that granted the
 * upstream's scope (then the agent gets its code once the person is back).
 */
import * as v from "valibot";
import type { Accounts, Role, Session, Sessions } from "../../accounts/model.ts";
import { seeOther, signedInPage } from "../../accounts/signed_in.ts";
import { readForm } from "../../http/form.ts";
import type { Handler } from "../../http/handler.ts";
import type { LogSink } from "../../http/request_log.ts";
import { jsonResponse, privatePage } from "../../http/responses.ts";
import type { MethodHandlers } from "../../http/router.ts";
import type { UpstreamSignIns } from "../../oauth/consent_continuation.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { ReturnDescriber, ReturnTargets } from "../../ui/auth_pages.ts";
import { type Html, html } from "../../ui/html.ts";
import { serves } from "../upstream_calls.ts";
import type { Caller } from "../upstream_set.ts";
import { BOUND_PARAM, type ConnectLinks } from "./connect_links.ts";
import { createConnectionPage, CSRF_PURPOSE } from "./connection_page.ts";
import type { Connections } from "./connections.ts";
import { createConsentSteps } from "./consent_steps.ts";
import { connectErrorPage, connectionsSection } from "./pages.ts";

export interface ConnectRoutesDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly connections: Connections;
  /** The per-person upstreams now (one discovered from its 401 joins them). */
  readonly upstreams: () => readonly UpstreamConfig[];
  /** The authorization server's issuer, for the redirect back to an agent. */
  readonly issuer: string;
  /** Lists the upstream's tools with a fresh connection (so everyone learns them). */
  readonly learnTools: (upstream: string, caller: Caller) => Promise<void>;
  /** Checks the binding of an elicitation's link (connect_links.ts). */
  readonly links: ConnectLinks;
  readonly authUrl: string;
  /** Where a connection that cannot start is told, with the upstream's own words. */
  readonly log: LogSink;
}

export interface ConnectRoutes {
  /** /connections/<upstream>: the page (GET) and its forms (POST). */
  readonly upstream: MethodHandlers;
  readonly callback: MethodHandlers;
  readonly clientDocument: MethodHandlers;
  /** For the consent: which granted upstreams still need the person's account. */
  readonly signIns: UpstreamSignIns;
  /** The /account section of a business. */
  section(businessId: string, role: Role, accountId: string): Promise<Html>;
  /** Says on the sign-in page which account the person is about to connect. */
  readonly waiting: ReturnDescriber;
  /** A connect link signed out leads, after the sign-in, on to the upstream's sign-in. */
  readonly leadsTo: ReturnTargets;
}

const FormSchema = v.object({
  csrf: v.optional(v.string(), ""),
  business: v.string("business is missing"),
  consent: v.optional(v.string()),
  action: v.picklist(
    ["connect", "disconnect", "skip"],
    "action must be connect, disconnect or skip",
  ),
});

export function createConnectRoutes(deps: ConnectRoutesDeps): ConnectRoutes {
  const { accounts, sessions, connections } = deps;
  const page = createConnectionPage(deps);
  const steps = createConsentSteps(deps);

  /** The upstream a way back after signing in connects (`/connections/<name>`), if any. */
  const connecting = (returnTo: URL) => {
    const prefix = "/connections/";
    const name = returnTo.pathname.slice(prefix.length);
    return returnTo.pathname.startsWith(prefix)
      ? deps.upstreams().find((upstream) => upstream.name === name)
      : undefined;
  };

  /** Signed in; otherwise `signedOut` answers (by default: sign in, then back here). */
  const signedIn = (
    handler: (request: Request, session: Session) => Promise<Response>,
    signedOut?: (url: URL) => Response,
  ): Handler =>
    signedInPage(
      sessions,
      handler,
      (session, error) => connectErrorPage(session.account.email, "Request refused", error.message),
      signedOut,
    );

  // The link (from /account, or in an agent's tool error) starts connecting at once when there
  // is nothing connected yet, or the connection must be made again (it needs reconnecting, or
  // the upstream wants more scopes): a GET that only leads to the upstream's own sign-in (the
  // answer is bound to this session by its state). Connected, it shows the connection; from a
  // consent, the step with "Skip for now".
  const show = signedIn(async (request, session) => {
    const params = new URL(request.url).searchParams;
    const refused = await _notTheirs(deps.links, request, session, params);
    if (refused) return refused;
    const found = await page.subject(request, session, params.get("business"));
    if (!found.ok) return found.response;
    const { upstream, business } = found;
    const consent = params.get("consent");
    const own = await connections.get(upstream.name, {
      businessId: business.id,
      accountId: session.account.id,
    });
    if (consent === null && (own?.status !== "connected" || own.wanted.length > 0)) {
      return await page.start(session, upstream, business, null);
    }
    return await page.render(session, upstream, business, consent);
  });

  const act = signedIn(async (request, session) => {
    const form = v.parse(FormSchema, await readForm(request));
    if (!await sessions.verifyCsrf(session, CSRF_PURPOSE, form.csrf)) {
      return privatePage(
        connectErrorPage(
          session.account.email,
          "Request refused",
          "The form's security token is missing or wrong.",
        ),
        403,
      );
    }
    const found = await page.subject(request, session, form.business);
    if (!found.ok) return found.response;
    const { upstream, business } = found;
    const caller = { businessId: business.id, accountId: session.account.id };
    const consent = form.consent ?? null;
    if (form.action === "skip") {
      if (consent === null) {
        return seeOther(`/connections/${upstream.name}?business=${business.id}`);
      }
      return await steps.after(session, consent, upstream.name);
    }
    if (form.action === "disconnect") {
      const done = await connections.disconnect(upstream.name, caller, {
        actor: "human",
        accountId: session.account.id,
      });
      return await page.render(session, upstream, business, null, {
        kind: "done",
        text: done
          ? `Disconnected: Vestibule revoked and deleted the tokens of your ${upstream.title} account.`
          : "It was not connected.",
      });
    }
    return await page.start(session, upstream, business, consent);
  });

  const finish = async (request: Request, session: Session) => {
    const params = new URL(request.url).searchParams;
    const done = await connections.complete(params, {
      id: session.id,
      accountId: session.account.id,
    });
    if (!done.ok) {
      return privatePage(
        connectErrorPage(session.account.email, "Not connected", `${done.problem}.`),
        400,
      );
    }
    await deps.learnTools(done.upstream.name, done.caller).catch(() => {});
    if (done.then.kind === "consent") {
      return await steps.after(session, done.then.id, done.upstream.name);
    }
    const business = await accounts.getBusiness(done.caller.businessId);
    return await page.render(session, done.upstream, business!, null, {
      kind: "done",
      text: `Connected: agents you allowed can now use ${done.upstream.title} as you.`,
    });
  };
  // A person whose session ended meanwhile is not sent to sign in with the upstream's code in
  // the page to return to: they start again once signed in.
  const callback = signedIn(finish, () =>
    privatePage(
      connectErrorPage(
        null,
        "Not connected",
        "Your Vestibule session ended while you were signing in upstream: sign in and connect again from your account.",
      ),
      400,
    ));

  return {
    upstream: { GET: show, POST: act },
    callback: { GET: callback },
    clientDocument: _clientDocument(connections, deps.authUrl),
    signIns: steps.signIns,
    waiting(returnTo) {
      const upstream = connecting(returnTo);
      if (upstream === undefined) return Promise.resolve(null);
      return Promise.resolve(html`<p>You are connecting your <strong>${upstream.title}</strong>
        account. After you sign in here, ${upstream.title}'s own sign-in opens.</p>`);
    },
    async leadsTo(returnTo) {
      // Only this upstream's authorization endpoint, and only on this sign-in's confirmation.
      const upstream = connecting(returnTo);
      const endpoint = upstream && await connections.authorizationEndpoint(upstream);
      return endpoint ? [endpoint] : [];
    },
    section: (businessId, role, accountId) => _section(deps, businessId, role, accountId),
  };
}

// An agent's URL elicitation sends its own person here (MCP "URL Mode Elicitation",
// Phishing): anyone else signed in is refused before anything starts, in plain words.
async function _notTheirs(
  links: ConnectLinks,
  request: Request,
  session: Session,
  params: URLSearchParams,
): Promise<Response | null> {
  const binding = params.get(BOUND_PARAM);
  const businessId = params.get("business");
  if (binding === null || businessId === null) return null;
  const name = new URL(request.url).pathname.slice("/connections/".length);
  const caller = { businessId, accountId: session.account.id };
  const checked = await links.check(name, caller, binding);
  if (checked === "ok") return null;
  return privatePage(
    connectErrorPage(
      session.account.email,
      checked === "expired" ? "Link expired" : "Not your link",
      checked === "expired"
        ? "This link to connect an account has expired. Ask your agent to call the tool again: it gets a new link."
        : "This link was made for another person's agent: only the person whose agent asked can connect their account with it. If you are that person, sign out and sign in as yourself; if your own agent needs the service, ask it to call the tool again.",
    ),
    403,
  );
}

/** Vestibule's client metadata document: our client id where the upstream accepts one. */
function _clientDocument(connections: Connections, authUrl: string): MethodHandlers {
  return {
    GET: () =>
      Promise.resolve(jsonResponse({
        client_id: connections.clientDocumentUrl,
        client_name: `Vestibule (${new URL(authUrl).host})`,
        client_uri: authUrl,
        redirect_uris: [connections.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }, { headers: { "Cache-Control": "public, max-age=3600" } })),
  };
}

/** The /account section of a business: each upstream it serves, with everyone's for an owner. */
async function _section(
  deps: ConnectRoutesDeps,
  businessId: string,
  role: Role,
  accountId: string,
): Promise<Html> {
  const { accounts, connections } = deps;
  const serving = deps.upstreams().filter((upstream) => serves(upstream, businessId));
  if (serving.length === 0) return connectionsSection(businessId, role, []);
  const all = role === "owner" ? await connections.listOfBusiness(businessId) : [];
  const emails = new Map<string, string>();
  for (const id of new Set(all.map((c) => c.accountId))) {
    emails.set(id, (await accounts.getAccount(id))?.email ?? "a former member");
  }
  const rows = await Promise.all(serving.map(async (upstream) => ({
    upstream,
    own: await connections.get(upstream.name, { businessId, accountId }),
    everyone: all.filter((c) => c.upstream === upstream.name).map((c) => ({
      ...c,
      email: emails.get(c.accountId)!,
    })),
  })));
  return connectionsSection(businessId, role, rows);
}
