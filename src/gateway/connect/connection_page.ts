// The page of one per-person upstream at {auth_url}/connections/<upstream>: which upstream and
// business it is about (or why there is none), the page itself with its forms' targets in its
// Content-Security-Policy, and starting a connection (off to the upstream's sign-in).
import type { Accounts, Session, Sessions } from "../../accounts/model.ts";
import { seeOther } from "../../accounts/signed_in.ts";
import { privatePage } from "../../http/responses.ts";
import { cspWithFormTargets } from "../../http/security_headers.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import { heldConsent } from "../../oauth/consent_continuation.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import { serves } from "../upstream_calls.ts";
import type { Connections } from "./connections.ts";
import type { Continuation } from "./sign_in_flow.ts";
import { connectErrorPage, connectPage, signInUnavailable } from "./pages.ts";

export interface ConnectionPageDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly connections: Connections;
  readonly upstreams: () => readonly UpstreamConfig[];
  /** Where a connection that cannot start is told, with the upstream's own words. */
  readonly log: LogSink;
}

export interface Business {
  readonly id: string;
  readonly name: string;
}

/** What the page notes above its forms. */
export interface PageNotice {
  readonly kind: "done" | "problem";
  readonly text: string;
}

export type Subject =
  | { readonly ok: true; readonly upstream: UpstreamConfig; readonly business: Business }
  | { readonly ok: false; readonly response: Response };

export interface ConnectionPage {
  /** The page's subject: the upstream and a business the person belongs to, or an error page. */
  subject(request: Request, session: Session, businessId: string | null): Promise<Subject>;
  render(
    session: Session,
    upstream: UpstreamConfig,
    business: Business,
    consent: string | null,
    notice?: PageNotice,
    status?: number,
  ): Promise<Response>;
  /** Off to the upstream's sign-in, or the page saying why that is not possible now. */
  start(
    session: Session,
    upstream: UpstreamConfig,
    business: Business,
    consent: string | null,
  ): Promise<Response>;
}

/** The purpose of the page forms' CSRF tokens. */
export const CSRF_PURPOSE = "upstream-connection";

export function createConnectionPage(deps: ConnectionPageDeps): ConnectionPage {
  const { store, accounts, sessions, connections } = deps;

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

  const render: ConnectionPage["render"] = async (
    session,
    upstream,
    business,
    consent,
    notice,
    status = 200,
  ) =>
    privatePage(
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
      {
        "Content-Security-Policy": cspWithFormTargets(
          await formTargets(session, upstream, consent),
        ),
      },
    );

  return {
    async subject(request, session, businessId) {
      // Upstream names are letters, digits and '-': the raw segment is compared, never decoded.
      const name = new URL(request.url).pathname.slice("/connections/".length);
      const upstream = deps.upstreams().find((upstream) => upstream.name === name);
      const membership = businessId === null
        ? null
        : await accounts.getMembership(session.account.id, businessId);
      const business = membership ? await accounts.getBusiness(businessId!) : null;
      if (upstream === undefined || business === null || !serves(upstream, business.id)) {
        return {
          ok: false,
          response: privatePage(
            connectErrorPage(
              session.account.email,
              "Not found",
              "There is no such service to connect in your businesses.",
            ),
            404,
          ),
        };
      }
      return { ok: true, upstream, business };
    },

    render,

    async start(session, upstream, business, consent) {
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
    },
  };
}
