/**
 * What a call is told when a person's connection cannot serve it, with the link that fixes it:
 * not connected yet, needs reconnecting, or a renewal that failed for now. Marking a connection
 * `needs_reconnect` happens once (one audit entry, one event, one mail to the person); every
 * later call only repeats the link, and nothing retries until the person reconnects.
 */
import type { Accounts } from "../../accounts/model.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { EventOutbox } from "../../events/event_outbox.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import { composeMail } from "../../mail/compose.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Store } from "../../store/store.ts";
import type { AuditLog } from "../../workspace/domain/audit.ts";
import type { Caller } from "../upstream_set.ts";
import { connectionAudit, connectionKey, type ConnectionRecord } from "./connection_store.ts";

export type TokenLookup =
  | { readonly ok: true; readonly token: string }
  | {
    readonly ok: false;
    readonly reason: "not_connected" | "needs_reconnect" | "unavailable";
    /** Plain words for the agent, with the link to (re)connect where one helps. */
    readonly message: string;
  };

export interface Reconnects {
  /** The page where a person connects `upstream` for a business (the agent's link). */
  connectUrl(upstream: string, businessId: string): string;
  notConnected(upstream: UpstreamConfig, caller: Caller): TokenLookup;
  /** The answer for a connection already marked `needs_reconnect`. */
  stillNeeded(upstream: UpstreamConfig, caller: Caller): TokenLookup;
  /** Marks the connection `needs_reconnect` once: audit, event, and a mail to the person. */
  needed(upstream: UpstreamConfig, caller: Caller, problem: string): Promise<TokenLookup>;
  unavailable(upstream: UpstreamConfig): TokenLookup;
  /**
   * The upstream refused a call for want of `scopes` (insufficient_scope): they are kept on the
   * connection for its reconnect to ask for, with those it has; the words for the agent.
   */
  moreScopes(upstream: UpstreamConfig, caller: Caller, scopes: readonly string[]): Promise<string>;
}

export interface ReconnectsDeps {
  readonly store: Store;
  readonly log: LogSink;
  readonly audit: Pick<AuditLog, "entry">;
  readonly events: EventOutbox;
  readonly mailer: MailOutbox;
  readonly accounts: Pick<Accounts, "getAccount" | "getBusiness">;
  readonly authUrl: string;
}

export function createReconnects(deps: ReconnectsDeps): Reconnects {
  const { store, log } = deps;

  const connectUrl = (upstream: string, businessId: string) =>
    `${deps.authUrl}/connections/${encodeURIComponent(upstream)}?business=${
      encodeURIComponent(businessId)
    }`;

  const stillNeeded = (upstream: UpstreamConfig, caller: Caller): TokenLookup => ({
    ok: false,
    reason: "needs_reconnect",
    message:
      `Your ${upstream.title} sign-in could no longer be renewed: reconnect your account at ${
        connectUrl(upstream.name, caller.businessId)
      }, then call again`,
  });
  const notConnected = (upstream: UpstreamConfig, caller: Caller): TokenLookup => ({
    ok: false,
    reason: "not_connected",
    message: `${upstream.title} needs you to connect your own account first: connect it at ${
      connectUrl(upstream.name, caller.businessId)
    }, then call again`,
  });
  const unavailable = (upstream: UpstreamConfig): TokenLookup => ({
    ok: false,
    reason: "unavailable",
    message: `Your ${upstream.title} sign-in could not be renewed just now; try again shortly`,
  });

  /** To the person whose sign-in at an upstream could not be renewed: what broke, where to fix it. */
  const reconnectMail = async (
    upstream: UpstreamConfig,
    caller: Caller,
    email: string,
    problem: string,
  ) => {
    const business = await deps.accounts.getBusiness(caller.businessId);
    const businessName = business?.name ?? "your business";
    return composeMail({
      to: email,
      subject: `Reconnect your ${upstream.title} account for ${businessName}`,
      heading: `Your ${upstream.title} account needs reconnecting in "${businessName}"`,
      paragraphs: [
        `Vestibule could no longer renew your sign-in to ${upstream.title} (${problem}).`,
        `Agents cannot use its tools for you in "${businessName}" until you reconnect it. ` +
        `Reconnecting asks you to sign in to ${upstream.title} again.`,
      ],
      action: {
        label: `Reconnect ${upstream.title}`,
        url: connectUrl(upstream.name, caller.businessId),
      },
      reason: `You get this because you connected your ${upstream.title} account to ` +
        `"${businessName}" on Vestibule.`,
      origin: deps.authUrl,
    });
  };

  const needed = async (
    upstream: UpstreamConfig,
    caller: Caller,
    problem: string,
  ): Promise<TokenLookup> => {
    const key = connectionKey(upstream.name, caller);
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) return notConnected(upstream, caller);
      if (entry.value.status === "needs_reconnect") return stillNeeded(upstream, caller);
      const account = await deps.accounts.getAccount(caller.accountId);
      const events = await deps.events.record(caller.businessId, [{
        type: "upstream.refresh_failed",
        data: {
          businessId: caller.businessId,
          upstream: upstream.name,
          accountId: caller.accountId,
        },
      }]);
      const mail = account === null
        ? null
        : deps.mailer.record(await reconnectMail(upstream, caller, account.email, problem));
      const committed = await store.commit(
        [{ key, version: entry.version }, ...events.checks],
        [
          {
            type: "set",
            key,
            value: { ...entry.value, status: "needs_reconnect", lease: null, problem },
          },
          connectionAudit(deps.audit, caller, {
            actor: "operator",
            action: "upstream_refresh_failed",
            summary:
              `The sign-in to ${upstream.title} could not be renewed (${problem}); the person was asked to reconnect`,
          }),
          ...events.mutations,
          ...(mail?.mutations ?? []),
        ],
      );
      if (!committed) continue;
      deps.events.dispatch();
      if (mail) void deps.mailer.dispatch(mail.delivery);
      logEvent(log, {
        level: "warn",
        message: "upstream connection needs reconnecting",
        upstream: upstream.name,
        businessId: caller.businessId,
        accountId: caller.accountId,
        problem,
      });
      return stillNeeded(upstream, caller);
    }
    return unavailable(upstream);
  };

  const moreScopes = async (
    upstream: UpstreamConfig,
    caller: Caller,
    scopes: readonly string[],
  ): Promise<string> => {
    const key = connectionKey(upstream.name, caller);
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) break;
      const asked = new Set([...entry.value.scopes ?? [], ...entry.value.wanted ?? []]);
      const fresh = scopes.filter((scope) => !asked.has(scope));
      if (fresh.length === 0) break;
      const value = { ...entry.value, wanted: [...entry.value.wanted ?? [], ...fresh] };
      if (await store.commit([{ key, version: entry.version }], [{ type: "set", key, value }])) {
        logEvent(log, {
          level: "info",
          message:
            "an upstream asked a person's connection for more scopes (insufficient_scope); " +
            "reconnecting asks for them, and the upstreams file's oauth.scopes can ask from the start",
          upstream: upstream.name,
          scopes: fresh.join(" "),
        });
        break;
      }
    }
    const which = scopes.length === 0 ? "" : ` (${scopes.join(" ")})`;
    return `${upstream.title} needs a permission your connected account has not granted${which}: ` +
      `reconnect your account at ${
        connectUrl(upstream.name, caller.businessId)
      } to grant it, then call again`;
  };

  return { connectUrl, notConnected, stillNeeded, needed, unavailable, moreScopes };
}
