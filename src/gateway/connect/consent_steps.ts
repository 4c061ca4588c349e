// A consent that granted per-person upstream scopes goes on through the connect pages: which of
// the granted upstreams the person still has to connect, and after each step (connected or
// skipped), the next one or the redirect back to the agent with its code.
import type { Session } from "../../accounts/model.ts";
import { seeOther } from "../../accounts/signed_in.ts";
import {
  heldConsent,
  resumeConsent,
  type UpstreamSignIns,
} from "../../oauth/consent_continuation.ts";
import type { Store } from "../../store/store.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import { serves } from "../upstream_calls.ts";
import type { Connections } from "./connections.ts";
import { privatePage } from "../../http/responses.ts";
import { connectErrorPage } from "./pages.ts";

export interface ConsentStepsDeps {
  readonly store: Store;
  readonly connections: Connections;
  readonly upstreams: () => readonly UpstreamConfig[];
  /** The authorization server's issuer, for the redirect back to an agent. */
  readonly issuer: string;
}

export interface ConsentSteps {
  readonly signIns: UpstreamSignIns;
  /** The next upstream of the held consent after `current`, or the redirect to the agent. */
  after(session: Session, held: string, current: string): Promise<Response>;
}

export function createConsentSteps(deps: ConsentStepsDeps): ConsentSteps {
  const signIns: UpstreamSignIns = {
    async missing(accountId, businessId, scopes) {
      const wanted = deps.upstreams().filter((upstream) =>
        serves(upstream, businessId) && scopes.some((scope) => _opens(upstream, scope))
      );
      const missing: string[] = [];
      for (const upstream of wanted) {
        const own = await deps.connections.get(upstream.name, { businessId, accountId });
        if (own?.status !== "connected") missing.push(upstream.name);
      }
      return missing;
    },
    connectPath: (upstream, businessId, held) =>
      `/connections/${upstream}?business=${encodeURIComponent(businessId)}&consent=${
        encodeURIComponent(held)
      }`,
  };

  return {
    signIns,
    async after(session, held, current) {
      const consent = await heldConsent(deps.store, held, session.id);
      if (consent === null) {
        return privatePage(
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
      return await resumeConsent(deps.store, deps.issuer, held, session.id) ?? privatePage(
        connectErrorPage(
          session.account.email,
          "This request is no longer valid",
          "It was already answered.",
        ),
        400,
      );
    },
  };
}

/** The upstream scopes of `upstream` (its own and its mapped ones). */
function _opens(upstream: UpstreamConfig, scope: string): boolean {
  return scope === `upstream.${upstream.name}` || scope.startsWith(`upstream.${upstream.name}.`);
}
