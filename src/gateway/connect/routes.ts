/**
 * {auth_url}/connections/…: where a signed-in person connects (and disconnects) their own account
 * of a per-person upstream, the callback its authorization server sends them back to, and
 * Vestibule's own client metadata document (our client id where the server accepts one).
 * Reached from /account, from an agent's tool error, or from a consent that granted the
 * upstream's scope (then the agent gets its code once the person is back).
 */
import * as v from "valibot";
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { seeOther, signedInPage } from "../../accounts/signed_in.ts";
import { readForm } from "../../http/form.ts";
import type { Handler } from "../../http/handler.ts";
import { htmlResponse, jsonResponse } from "../../http/responses.ts";
import { cspWithFormTargets } from "../../http/security_headers.ts";
import type { MethodHandlers } from "../../http/router.ts";
import {
  heldConsent,
  resumeConsent,
  type UpstreamSignIns,
} from "../../oauth/consent_continuation.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { ReturnDescriber, ReturnTargets } from "../../ui/auth_pages.ts";
import { type Html, html } from "../../ui/html.ts";
import type { Role } from "../../accounts/model.ts";
import { serves } from "../upstream_calls.ts";
import type { Caller } from "../upstream_set.ts";
import type { Connections, Continuation } from "./connections.ts";
import { connectErrorPage, connectionsSection, connectPage, signInUnavailable } from "./pages.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import { BOUND_PARAM, type ConnectLinks } from "./connect_links.ts";

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

const CSRF_PURPOSE = "upstream-connection";
const NO_STORE = { "Cache-Control": "no-store" };

const _page = (body: string, status = 200, csp?: string) =>
  htmlResponse(body, {
    status,
    headers: { ...NO_STORE, ...(csp === undefined ? {} : { "Content-Security-Policy": csp }) },
  });

export function createConnectRoutes(deps: ConnectRoutesDeps): ConnectRoutes {
  const { store, accounts, sessions, connections } = deps;

  const upstreamNamed = (name: string) =>
    deps.upstreams().find((upstream) => upstream.name === name);

  /** The upstream a way back after signing in connects (`/connections/<name>`), if any. */
  const connecting = (returnTo: URL) => {
    const prefix = "/connections/";
    return returnTo.pathname.startsWith(prefix)
      ? upstreamNamed(returnTo.pathname.slice(prefix.length))
      : undefined;
  };

  /** The upstream scopes of `upstream` (its own and its mapped ones). */
  const opens = (upstream: UpstreamConfig, scope: string) =>
    scope === `upstream.${upstream.name}` || scope.startsWith(`upstream.${upstream.name}.`);

  const signIns: UpstreamSignIns = {
    async missing(accountId, businessId, scopes) {
      const wanted = deps.upstreams().filter((upstream) =>
        serves(upstream, businessId) && scopes.some((scope) => opens(upstream, scope))
      );
      const missing: string[] = [];
      for (const upstream of wanted) {
        const own = await connections.get(upstream.name, { businessId, accountId });
        if (own?.status !== "connected") missing.push(upstream.name);
      }
      return missing;
    },
    connectPath: (upstream, businessId, held) =>
      `/connections/${upstream}?business=${encodeURIComponent(businessId)}&consent=${
        encodeURIComponent(held)
      }`,
  };

  /** The next upstream of a held consent after `current`, or the redirect to the agent. */
  const afterConsentStep = async (
    session: Session,
    held: string,
    current: string,
  ): Promise<Response> => {
    const consent = await heldConsent(store, held, session.id);
    if (consent === null) {
      return _page(
        connectErrorPage(
          session.account.email,
          "This request is no longer valid",
          "The application's request expired or was already answered: start again from the application.",
        ),
        400,
      );
    }
    const order = deps.upstreams().map((upstream) => upstream.name);
    const { businessId, accountId, scopes } = consent.binding;
    const next = (await signIns.missing(accountId, businessId, scopes)).find((name) =>
      order.indexOf(name) > order.indexOf(current)
    );
    if (next !== undefined) return seeOther(signIns.connectPath(next, businessId, held));
    return await resumeConsent(store, deps.issuer, held, session.id) ?? _page(
      connectErrorPage(
        session.account.email,
        "This request is no longer valid",
        "It was already answered.",
      ),
      400,
    );
  };

  /** The page's subject: the upstream and a business the person belongs to, or an error page. */
  const subject = async (request: Request, session: Session, businessId: string | null) => {
    // Upstream names are letters, digits and '-': the raw segment is compared, never decoded.
    const name = new URL(request.url).pathname.slice("/connections/".length);
    const upstream = upstreamNamed(name);
    const membership = businessId === null
      ? null
      : await accounts.getMembership(session.account.id, businessId);
    const business = membership ? await accounts.getBusiness(businessId!) : null;
    if (upstream === undefined || business === null || !serves(upstream, business.id)) {
      return {
        ok: false as const,
        response: _page(
          connectErrorPage(
            session.account.email,
            "Not found",
            "There is no such service to connect in your businesses.",
          ),
          404,
        ),
      };
    }
    return { ok: true as const, upstream, business };
  };

  /**
   * The page's forms lead away from us: "connect" to the upstream's authorization endpoint, and
   * "skip" back to the agent of a held consent.
   */
  const formTargets = async (
    session: Session,
    upstream: UpstreamConfig,
    consent: string | null,
  ) => {
    const endpoint = await connections.authorizationEndpoint(upstream);
    const held = consent === null ? null : await heldConsent(store, consent, session.id);
    return [...(endpoint === null ? [] : [endpoint]), ...(held === null ? [] : [held.redirectUri])];
  };

  const render = async (
    session: Session,
    upstream: UpstreamConfig,
    business: { id: string; name: string },
    consent: string | null,
    notice?: { kind: "done" | "problem"; text: string },
    status = 200,
  ) =>
    _page(
      connectPage({
        email: session.account.email,
        upstream,
        businessName: business.name,
        businessId: business.id,
        connection: await connections.get(upstream.name, {
          businessId: business.id,
          accountId: session.account.id,
        }),
        csrf: await sessions.csrfToken(session, CSRF_PURPOSE),
        consent,
        ...(notice ? { notice } : {}),
      }),
      status,
      cspWithFormTargets(await formTargets(session, upstream, consent)),
    );

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

  /** Off to the upstream's sign-in, or the page saying why that is not possible now. */
  const start = async (
    session: Session,
    upstream: UpstreamConfig,
    business: { id: string; name: string },
    consent: string | null,
  ) => {
    const caller = { businessId: business.id, accountId: session.account.id };
    const then: Continuation = consent === null
      ? { kind: "account" }
      : { kind: "consent", id: consent };
    const started = await connections.begin({ upstream, caller, sessionId: session.id, then });
    if (!started.ok) {
      logEvent(deps.log, {
        level: "warn",
        message: "a person's connection to the upstream could not start",
        upstream: upstream.name,
        problem: started.problem,
      });
      return await render(session, upstream, business, consent, {
        kind: "problem",
        text: signInUnavailable(upstream.title),
      }, 502);
    }
    return seeOther(started.url);
  };

  // An agent's URL elicitation sends its own person here (MCP "URL Mode Elicitation",
  // Phishing): anyone else signed in is refused before anything starts, in plain words.
  const notTheirs = async (request: Request, session: Session, params: URLSearchParams) => {
    const binding = params.get(BOUND_PARAM);
    const businessId = params.get("business");
    if (binding === null || businessId === null) return null;
    const name = new URL(request.url).pathname.slice("/connections/".length);
    const caller = { businessId, accountId: session.account.id };
    const checked = await deps.links.check(name, caller, binding);
    if (checked === "ok") return null;
    return _page(
      connectErrorPage(
        session.account.email,
        checked === "expired" ? "Link expired" : "Not your link",
        checked === "expired"
          ? "This link to connect an account has expired. Ask your agent to call the tool again: it gets a new link."
          : "This link was made for another person's agent: only the person whose agent asked can connect their account with it. If you are that person, sign out and sign in as yourself; if your own agent needs the service, ask it to call the tool again.",
      ),
      403,
    );
  };

  // The link (from /account, or in an agent's tool error) starts connecting at once when there
  // is nothing connected yet, or the connection must be made again (it needs reconnecting, or
  // the upstream wants more scopes): a GET that only leads to the upstream's own sign-in (the
  // answer is bound to this session by its state). Connected, it shows the connection; from a
  // consent, the step with "Skip for now".
  const show = signedIn(async (request, session) => {
    const params = new URL(request.url).searchParams;
    const refused = await notTheirs(request, session, params);
    if (refused) return refused;
    const found = await subject(request, session, params.get("business"));
    if (!found.ok) return found.response;
    const { upstream, business } = found;
    const consent = params.get("consent");
    const own = await connections.get(upstream.name, {
      businessId: business.id,
      accountId: session.account.id,
    });
    if (consent === null && (own?.status !== "connected" || own.wanted.length > 0)) {
      return await start(session, upstream, business, null);
    }
    return await render(session, upstream, business, consent);
  });

  const act = signedIn(async (request, session) => {
    const form = v.parse(FormSchema, await readForm(request));
    if (!await sessions.verifyCsrf(session, CSRF_PURPOSE, form.csrf)) {
      return _page(
        connectErrorPage(
          session.account.email,
          "Request refused",
          "The form's security token is missing or wrong.",
        ),
        403,
      );
    }
    const found = await subject(request, session, form.business);
    if (!found.ok) return found.response;
    const { upstream, business } = found;
    const caller = { businessId: business.id, accountId: session.account.id };
    const consent = form.consent ?? null;
    if (form.action === "skip") {
      if (consent === null) {
        return seeOther(`/connections/${upstream.name}?business=${business.id}`);
      }
      return await afterConsentStep(session, consent, upstream.name);
    }
    if (form.action === "disconnect") {
      const done = await connections.disconnect(upstream.name, caller, {
        actor: "human",
        accountId: session.account.id,
      });
      return await render(session, upstream, business, null, {
        kind: "done",
        text: done
          ? `Disconnected: Vestibule revoked and deleted the tokens of your ${upstream.title} account.`
          : "It was not connected.",
      });
    }
    return await start(session, upstream, business, consent);
  });

  const finish = async (request: Request, session: Session) => {
    const params = new URL(request.url).searchParams;
    const done = await connections.complete(params, {
      id: session.id,
      accountId: session.account.id,
    });
    if (!done.ok) {
      return _page(
        connectErrorPage(session.account.email, "Not connected", `${done.problem}.`),
        400,
      );
    }
    await deps.learnTools(done.upstream.name, done.caller).catch(() => {});
    if (done.then.kind === "consent") {
      return await afterConsentStep(session, done.then.id, done.upstream.name);
    }
    const business = await accounts.getBusiness(done.caller.businessId);
    return await render(session, done.upstream, business!, null, {
      kind: "done",
      text: `Connected: agents you allowed can now use ${done.upstream.title} as you.`,
    });
  };
  // A person whose session ended meanwhile is not sent to sign in with the upstream's code in
  // the page to return to: they start again once signed in.
  const callback = signedIn(finish, () =>
    _page(
      connectErrorPage(
        null,
        "Not connected",
        "Your Vestibule session ended while you were signing in upstream: sign in and connect again from your account.",
      ),
      400,
    ));

  const clientDocument: MethodHandlers = {
    GET: () =>
      Promise.resolve(jsonResponse({
        client_id: connections.clientDocumentUrl,
        client_name: `Vestibule (${new URL(deps.authUrl).host})`,
        client_uri: deps.authUrl,
        redirect_uris: [connections.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      }, { headers: { "Cache-Control": "public, max-age=3600" } })),
  };

  return {
    upstream: { GET: show, POST: act },
    callback: { GET: callback },
    clientDocument,
    signIns,
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
    async section(businessId, role, accountId) {
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
    },
  };
}
