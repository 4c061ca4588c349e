/**
 * Each person's own connection to an upstream that needs their sign-in (`"auth": "person"`),
 * per business: starting it (discovery and our client, upstream_clients.ts; PKCE, state),
 * finishing it on the callback, and the token of each call (connection_tokens.ts). Records and
 * their ends (disconnecting) are connection_store.ts's; what a call is told when a connection
 * cannot serve, reconnects.ts's.
 */
import type { Accounts } from "../../accounts/model.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { EventOutbox } from "../../events/event_outbox.ts";
import type { LogSink } from "../../http/request_log.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import { base64url, hashSecret, randomSecret, sha256 } from "../../secrets.ts";
import type { Key, Store } from "../../store/store.ts";
import type { AuditLog } from "../../workspace/domain/audit.ts";
import type { Caller } from "../upstream_set.ts";
import {
  connectionAudit,
  connectionKey,
  type ConnectionRecord,
  type ConnectionStore,
  type ConnectionView,
  createConnectionStore,
  type Disconnector,
  type StoredClient,
} from "./connection_store.ts";
import { createConnectionTokens } from "./connection_tokens.ts";
import type { AuthorizationServer, DiscoveryDeps } from "./discovery.ts";
import { authorizationUrl, checkAuthorizationResponse, exchangeCode } from "./oauth_client.ts";
import { createReconnects, type TokenLookup } from "./reconnects.ts";
import { createUpstreamClients } from "./upstream_clients.ts";
import { type Sealed, type TokenVault, VaultError } from "./vault.ts";

/** Where the person goes once connected: their account page, or back to an agent's consent. */
export type Continuation =
  | { readonly kind: "account" }
  | { readonly kind: "consent"; readonly id: string };

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
  begin(input: {
    readonly upstream: UpstreamConfig;
    readonly caller: Caller;
    readonly sessionId: string;
    readonly then: Continuation;
  }): Promise<{ ok: true; url: string } | { ok: false; problem: string }>;
  /** Where `begin` sends the person (discovered, cached); null when discovery fails now. */
  authorizationEndpoint(upstream: UpstreamConfig): Promise<string | null>;
  /** The callback: checks the answer, exchanges the code, stores the tokens sealed. */
  complete(
    params: URLSearchParams,
    session: { readonly id: string; readonly accountId: string },
  ): Promise<
    | { ok: true; upstream: UpstreamConfig; caller: Caller; then: Continuation }
    | { ok: false; problem: string; then: Continuation | null }
  >;
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

export interface ConnectionsDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly vault: TokenVault;
  readonly log: LogSink;
  readonly audit: AuditLog;
  readonly events: EventOutbox;
  readonly mailer: MailOutbox;
  readonly accounts: Pick<Accounts, "getAccount" | "getBusiness">;
  readonly authUrl: string;
  /** The upstreams that need each person's sign-in, by name (the set may grow: discovered). */
  readonly upstream: (name: string) => UpstreamConfig | undefined;
  /** VESTIBULE_CIMD_ALLOW_LOOPBACK: the same boundary as our own metadata-document fetches. */
  readonly allowLoopback: boolean;
  readonly fetch?: typeof fetch;
  readonly resolveDns?: DiscoveryDeps["resolveDns"];
  /** Milliseconds a refresh holds its lease; longer than a refresh may take. */
  readonly leaseMs?: number;
}

/** How long a person has to finish signing in upstream. */
const AUTHORIZATION_LIFETIME_MS = 10 * 60 * 1000;

/** A sign-in under way, keyed by the hash of its state. */
interface PendingAuthorization {
  readonly upstream: string;
  readonly businessId: string;
  readonly accountId: string;
  readonly sessionId: string;
  readonly verifier: Sealed;
  readonly resource: string;
  readonly server: AuthorizationServer;
  readonly client: StoredClient;
  readonly scopes: readonly string[];
  readonly then: Continuation;
}

const pendingKey = (stateHash: string): Key => ["upstream_authorization", stateHash];

export function createConnections(deps: ConnectionsDeps): Connections {
  const { store, now, vault } = deps;
  const records: ConnectionStore = createConnectionStore(deps);
  const http = { ...(deps.fetch ? { fetch: deps.fetch } : {}), now };
  const redirectUri = `${deps.authUrl}/connections/callback`;
  const clientDocumentUrl = `${deps.authUrl}/connections/client.json`;
  const reconnects = createReconnects(deps);
  const clients = createUpstreamClients({ ...deps, records, redirectUri, clientDocumentUrl });
  const tokens = createConnectionTokens({ ...deps, records, reconnects });

  return {
    connectUrl: reconnects.connectUrl,
    redirectUri,
    clientDocumentUrl,

    async begin({ upstream, caller, sessionId, then }) {
      if (upstream.auth === null) {
        return { ok: false, problem: `${upstream.title} needs no sign-in of its own` };
      }
      const found = await clients.discover(upstream);
      if (!found.ok) return { ok: false, problem: found.problem };
      const { server, resource } = found.value;
      const client = await clients.clientFor(upstream, upstream.auth, server);
      if (!client.ok) return client;
      // MCP step-up: what the connection asked for and what the upstream wanted since, kept.
      const previous = (await records.read(upstream.name, caller))?.value;
      const scopes = [
        ...new Set([
          ...upstream.auth.scopes ?? found.value.scopes,
          ...previous?.scopes ?? [],
          ...previous?.wanted ?? [],
        ]),
      ];
      const state = randomSecret();
      const verifier = randomSecret(48);
      const challenge = base64url(await sha256(verifier));
      const pending: PendingAuthorization = {
        upstream: upstream.name,
        businessId: caller.businessId,
        accountId: caller.accountId,
        sessionId,
        verifier: await vault.seal(`verifier:${upstream.name}`, verifier),
        resource,
        server,
        client: client.client,
        scopes,
        then,
      };
      await store.set(pendingKey(await hashSecret(state)), pending, {
        expireIn: AUTHORIZATION_LIFETIME_MS,
      });
      return {
        ok: true,
        url: authorizationUrl(server, await records.credentials(upstream.name, client.client), {
          redirectUri,
          state,
          codeChallenge: challenge,
          resource,
          scopes,
        }),
      };
    },

    async authorizationEndpoint(upstream) {
      if (upstream.auth === null) return null;
      const found = await clients.discover(upstream);
      return found.ok ? found.value.server.authorizationEndpoint : null;
    },

    async complete(params, session) {
      const state = params.get("state") ?? "";
      const key = pendingKey(await hashSecret(state));
      const entry = state === "" ? null : await store.get<PendingAuthorization>(key);
      if (entry === null) {
        return {
          ok: false,
          problem: "This sign-in answer is unknown or expired: start connecting again",
          then: null,
        };
      }
      const pending = entry.value;
      // Single use, whatever happens next; and only for the session that started it.
      if (!await store.commit([{ key, version: entry.version }], [{ type: "delete", key }])) {
        return { ok: false, problem: "This sign-in answer was already used", then: null };
      }
      if (pending.sessionId !== session.id || pending.accountId !== session.accountId) {
        return {
          ok: false,
          problem: "This sign-in was started in another session: start connecting again",
          then: null,
        };
      }
      const upstream = deps.upstream(pending.upstream);
      const then = pending.then;
      if (upstream === undefined || upstream.auth === null) {
        return { ok: false, problem: `${pending.upstream} is no longer configured`, then };
      }
      const answer = checkAuthorizationResponse(pending.server, params, state);
      if (!answer.ok) return { ok: false, problem: answer.problem, then };
      let client, codeVerifier;
      try {
        client = await records.credentials(upstream.name, pending.client);
        codeVerifier = await vault.open(`verifier:${upstream.name}`, pending.verifier);
      } catch (error) {
        // The key file changed while the person was signing in upstream.
        if (!(error instanceof VaultError)) throw error;
        return { ok: false, problem: "Vestibule's key changed meanwhile: connect again", then };
      }
      const outcome = await exchangeCode(pending.server, client, {
        code: answer.code,
        codeVerifier,
        redirectUri,
        resource: pending.resource,
      }, http);
      if (!outcome.ok) {
        return {
          ok: false,
          problem: `${upstream.title} did not complete the sign-in: ${outcome.problem}`,
          then,
        };
      }
      const caller = { businessId: pending.businessId, accountId: pending.accountId };
      const connection = connectionKey(upstream.name, caller);
      const previous = await store.get<ConnectionRecord>(connection);
      const at = now();
      const record: ConnectionRecord = {
        status: "connected",
        resource: pending.resource,
        server: pending.server,
        client: pending.client,
        tokens: await records.sealPair(connection, {
          accessToken: outcome.tokens.accessToken,
          refreshToken: outcome.tokens.refreshToken,
        }),
        expiresAt: outcome.tokens.expiresAt,
        obtainedAt: at,
        connectedAt: at,
        refreshedAt: null,
        lease: null,
        problem: null,
        scopes: pending.scopes ?? [],
        wanted: [],
      };
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await store.get<ConnectionRecord>(connection);
        const events = await deps.events.record(caller.businessId, [{
          type: "upstream.connected",
          data: {
            businessId: caller.businessId,
            upstream: upstream.name,
            accountId: caller.accountId,
          },
        }]);
        const committed = await store.commit(
          [{ key: connection, version: current?.version ?? null }, ...events.checks],
          [
            { type: "set", key: connection, value: record },
            connectionAudit(deps.audit, caller, {
              actor: "human",
              action: "upstream_connected",
              summary: `${
                previous === null ? "Connected" : "Reconnected"
              } their ${upstream.title} account`,
            }),
            ...events.mutations,
          ],
        );
        if (committed) {
          deps.events.dispatch();
          // The tokens it replaces are revoked: a reconnect leaves no old pair alive upstream.
          if (previous !== null) void records.revoke(upstream.name, connection, previous.value);
          return { ok: true, upstream, caller, then };
        }
      }
      return { ok: false, problem: "The connection changed meanwhile: try again", then };
    },

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
