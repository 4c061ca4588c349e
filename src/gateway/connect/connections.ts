/**
 * Each person's own connection to an upstream that needs their sign-in (`"auth": "person"`),
 * per business: starting it and finishing it on the callback (sign_in_flow.ts; discovery and
 * our client, upstream_clients.ts), and the token of each call (connection_tokens.ts). Records and
 * their ends (disconnecting) are connection_store.ts's; what a call is told when a connection
 * cannot serve, reconnects.ts's.
 */
import type { Accounts } from "../../accounts/model.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { LogSink } from "../../http/request_log.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import type { Caller } from "../upstream_set.ts";
import {
  type ConnectionStore,
  type ConnectionView,
  createConnectionStore,
  type Disconnector,
} from "./connection_store.ts";
import { createConnectionTokens } from "./connection_tokens.ts";
import type { DiscoveryDeps } from "./discovery.ts";
import { createReconnects, type TokenLookup } from "./reconnects.ts";
import {
  beginSignIn,
  completeSignIn,
  type SignInDeps,
  type SignInOutcome,
  type SignInStart,
} from "./sign_in_flow.ts";
import { createUpstreamClients } from "./upstream_clients.ts";

export interface Connections {
  /** The page where a person connects `upstream` for a business (the agent's link). */
  connectUrl(upstream: string, businessId: string): string;
  /** Where the upstream's authorization server sends the person back. */
  readonly redirectUri: string;
  /** Vestibule's own client metadata document, served at its client id. */
  readonly clientDocumentUrl: string;
  /**
   * Starts connecting: the URL of the upstream's authorization endpoint to send the person to,
   * with the state that binds the answer to this session.
   */
  begin(input: SignInStart): Promise<{ ok: true; url: string } | { ok: false; problem: string }>;
  /** Where `begin` sends the person (discovered, cached); null when discovery fails now. */
  authorizationEndpoint(upstream: UpstreamConfig): Promise<string | null>;
  /** The callback: checks the answer, exchanges the code, stores the tokens sealed. */
  complete(
    params: URLSearchParams,
    session: { readonly id: string; readonly accountId: string },
  ): Promise<SignInOutcome>;
  get(upstream: string, caller: Caller): Promise<ConnectionView | null>;
  /** Every connection in a business (the owner's view). */
  listOfBusiness(businessId: string): Promise<ConnectionView[]>;
  /** The token for a call of `upstream` by `caller`, refreshed first when it is about to expire. */
  accessToken(upstream: UpstreamConfig, caller: Caller): Promise<TokenLookup>;
  /** The upstream refused `token` (401): one refresh, or the connection needs reconnecting. */
  rejected(upstream: UpstreamConfig, caller: Caller, token: string): Promise<TokenLookup>;
  /** The upstream refused even a renewed token: the connection needs reconnecting. */
  refused(upstream: UpstreamConfig, caller: Caller, problem: string): Promise<TokenLookup>;
  /** The upstream wants `scopes` the token lacks (403 insufficient_scope): the agent's words. */
  moreScopes(upstream: UpstreamConfig, caller: Caller, scopes: readonly string[]): Promise<string>;
  /** Revokes upstream where it can, deletes, and records who did it. False: none existed. */
  disconnect(upstream: string, caller: Caller, by: Disconnector): Promise<boolean>;
}

export interface ConnectionsDeps extends SignInDeps {
  readonly log: LogSink;
  readonly mailer: MailOutbox;
  readonly accounts: Pick<Accounts, "getAccount" | "getBusiness">;
  readonly authUrl: string;
  /** VESTIBULE_CIMD_ALLOW_LOOPBACK: the same boundary as our own metadata-document fetches. */
  readonly allowLoopback: boolean;
  readonly resolveDns?: DiscoveryDeps["resolveDns"];
  /** Milliseconds a refresh holds its lease; longer than a refresh may take. */
  readonly leaseMs?: number;
}

export function createConnections(deps: ConnectionsDeps): Connections {
  const records: ConnectionStore = createConnectionStore(deps);
  const redirectUri = `${deps.authUrl}/connections/callback`;
  const clientDocumentUrl = `${deps.authUrl}/connections/client.json`;
  const reconnects = createReconnects(deps);
  const clients = createUpstreamClients({ ...deps, records, redirectUri, clientDocumentUrl });
  const tokens = createConnectionTokens({ ...deps, records, reconnects });
  const flow = { deps, records, clients, redirectUri };

  return {
    connectUrl: reconnects.connectUrl,
    redirectUri,
    clientDocumentUrl,

    begin: (start) => beginSignIn(flow, start),

    async authorizationEndpoint(upstream) {
      if (upstream.auth === null) return null;
      const found = await clients.discover(upstream);
      return found.ok ? found.value.server.authorizationEndpoint : null;
    },

    complete: (params, session) => completeSignIn(flow, params, session),

    async get(upstream, caller) {
      const entry = await records.read(upstream, caller);
      return entry === null ? null : records.view(entry.key, entry.value);
    },

    listOfBusiness: records.listOfBusiness,

    accessToken: tokens.accessToken,
    rejected: tokens.rejected,
    refused: reconnects.needed,
    moreScopes: reconnects.moreScopes,

    disconnect: records.disconnect,
  };
}
