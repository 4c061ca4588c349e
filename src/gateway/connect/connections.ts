/**
 * Each person's own connection to an upstream that needs their sign-in (`"auth": "person"`),
 * per business: starting it (discovery, our client registration, PKCE, state), finishing it on
 * the callback, and handing out a fresh access token for each call, refreshed before it
 * expires. Records and their ends (disconnecting) are connection_store.ts's.
 *
 * One refresh at a time per connection across replicas: a lease on the record itself (a commit
 * on its version), and the rotated pair is saved in the commit that ends the lease. A refresh
 * the authorization server refuses for good marks the connection `needs_reconnect` once (one
 * audit entry, one event, one mail); calls then say so, and nothing retries until the person
 * reconnects.
 */
import type { Accounts } from "../../accounts/model.ts";
import { BoundedMap } from "../../bounded_map.ts";
import { isLoopbackHost } from "../../config/values.ts";
import type { PersonAuth, UpstreamConfig } from "../../config/upstreams.ts";
import type { EventOutbox } from "../../events/event_outbox.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import type { MailOutbox } from "../../mail/mail_outbox.ts";
import { composeMail } from "../../mail/compose.ts";
import { base64url, hashSecret, randomSecret, sha256 } from "../../secrets.ts";
import type { Key, Mutation, Store } from "../../store/store.ts";
import type { AuditLog, NewAuditEntry } from "../../workspace/domain/audit.ts";
import type { Caller } from "../upstream_set.ts";
import {
  connectionKey,
  type ConnectionRecord,
  type ConnectionStore,
  type ConnectionView,
  createConnectionStore,
  type Disconnector,
  registrationKey,
  type RegistrationRecord,
  type StoredClient,
} from "./connection_store.ts";
import {
  type AuthorizationServer,
  discoverAuthorization,
  type DiscoveryDeps,
  fetchChallenge,
} from "./discovery.ts";
import {
  authorizationUrl,
  checkAuthorizationResponse,
  exchangeCode,
  refreshTokens,
  registerClient,
} from "./oauth_client.ts";
import type { Sealed, TokenVault } from "./vault.ts";

/** Where the person goes once connected: their account page, or back to an agent's consent. */
export type Continuation =
  | { readonly kind: "account" }
  | { readonly kind: "consent"; readonly id: string };

export type TokenLookup =
  | { readonly ok: true; readonly token: string }
  | {
    readonly ok: false;
    readonly reason: "not_connected" | "needs_reconnect" | "unavailable";
    /** Plain words for the agent, with the link to (re)connect where one helps. */
    readonly message: string;
  };

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
/** A refresh's own budget is 10 s (oauth_client.ts); the lease outlives it. */
const LEASE_MS = 15_000;
/** How often a call waiting for another replica's refresh looks again. */
const LEASE_POLL_MS = 200;
/**
 * How long a call waits for another holder's refresh: well within VESTIBULE_READ_TIMEOUT
 * (10 s), which closes a request not answered by then, while a dead holder's lease runs 15 s.
 */
const LEASE_WAIT_MS = 5_000;
/** Refreshed this long before expiry at most (a quarter of a short lifetime otherwise). */
const REFRESH_AHEAD_MS = 60_000;
/** Connections whose opened access token a process keeps (a call's decryption saved). */
const OPENED_TOKENS = 1_000;
/** A failed discovery is answered from memory this long (the page reporting it asks again). */
const FAILURE_KEPT_MS = 30_000;
/** Discovery answers kept per process. */
const DISCOVERY_FRESH_MS = 10 * 60 * 1000;

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
  readonly then: Continuation;
}

const pendingKey = (stateHash: string): Key => ["upstream_authorization", stateHash];

export function createConnections(deps: ConnectionsDeps): Connections {
  const { store, now, vault, log } = deps;
  const records: ConnectionStore = createConnectionStore(deps);
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  const http = { ...(deps.fetch ? { fetch: deps.fetch } : {}), now };
  const redirectUri = `${deps.authUrl}/connections/callback`;
  const clientDocumentUrl = `${deps.authUrl}/connections/client.json`;
  const discovered = new Map<string, { until: number; value: Promise<DiscoveryResult> }>();
  /** This process's refreshes in flight, one per connection. */
  const refreshing = new Map<string, Promise<TokenLookup>>();
  const holder = randomSecret(12);
  /** Access tokens opened, by connection and the record's version they were opened from. */
  const opened = new BoundedMap<string, { version: string; token: string }>(OPENED_TOKENS);

  const connectUrl = (upstream: string, businessId: string) =>
    `${deps.authUrl}/connections/${encodeURIComponent(upstream)}?business=${
      encodeURIComponent(businessId)
    }`;

  type DiscoveryResult = Awaited<ReturnType<typeof discoverAuthorization>>;
  const discover = (upstream: UpstreamConfig): Promise<DiscoveryResult> => {
    const known = discovered.get(upstream.name);
    if (known && now() < known.until) return known.value;
    const url = _url(upstream);
    const value = (async () => {
      const challenge = await fetchChallenge(url, deps.fetch ?? fetch);
      const loopback = deps.allowLoopback || isLoopbackHost(new URL(url).hostname);
      return await discoverAuthorization(url, challenge, {
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
        ...(deps.resolveDns ? { resolveDns: deps.resolveDns } : {}),
        allowLoopback: loopback,
      });
    })();
    discovered.set(upstream.name, { until: now() + DISCOVERY_FRESH_MS, value });
    // A failure is kept briefly, then the next person tries again.
    void value.then((result) => {
      const still = discovered.get(upstream.name)?.value === value;
      if (!result.ok && still) {
        discovered.set(upstream.name, { until: now() + FAILURE_KEPT_MS, value });
      }
    });
    return value;
  };

  /** The client to use with `server`: the operator's, our document, or a registration. */
  const clientFor = async (
    upstream: UpstreamConfig,
    auth: PersonAuth,
    server: AuthorizationServer,
  ): Promise<{ ok: true; client: StoredClient } | { ok: false; problem: string }> => {
    if (auth.client !== null) {
      return {
        ok: true,
        client: {
          clientId: auth.client.id,
          authMethod: auth.client.secret === null
            ? "none"
            : server.tokenEndpointAuthMethods.includes("client_secret_post") &&
                !server.tokenEndpointAuthMethods.includes("client_secret_basic")
            ? "client_secret_post"
            : "client_secret_basic",
          source: "operator",
        },
      };
    }
    if (server.clientIdMetadataDocumentSupported) {
      return {
        ok: true,
        client: { clientId: clientDocumentUrl, authMethod: "none", source: "document" },
      };
    }
    const known = await store.get<RegistrationRecord>(registrationKey(upstream.name));
    if (known && known.value.issuer === server.issuer && known.value.redirectUri === redirectUri) {
      const { clientId, authMethod } = known.value;
      return { ok: true, client: { clientId, authMethod, source: "registered" } };
    }
    if (server.registrationEndpoint === null) {
      return {
        ok: false,
        problem: `${upstream.title}'s authorization server accepts neither client metadata ` +
          "documents nor registration: the operator must register Vestibule there and put " +
          "its client id in the upstreams file (oauth.clientId)",
      };
    }
    const registered = await registerClient(server, {
      redirectUri,
      clientName: `Vestibule (${new URL(deps.authUrl).host})`,
      clientUri: deps.authUrl,
      ...(auth.scopes ? { scope: auth.scopes.join(" ") } : {}),
    }, http);
    if (!registered.ok) return registered;
    const { clientId, clientSecret, authMethod } = registered.client;
    const record: RegistrationRecord = {
      issuer: server.issuer,
      redirectUri,
      clientId,
      authMethod,
      secret: clientSecret === null ? null : await records.sealSecret(upstream.name, clientSecret),
    };
    // Two processes registering at once: the first registration stored is the one used.
    const stored = await store.commit(
      [{ key: registrationKey(upstream.name), version: known?.version ?? null }],
      [{ type: "set", key: registrationKey(upstream.name), value: record }],
    );
    if (!stored) return await clientFor(upstream, auth, server);
    logEvent(log, {
      level: "info",
      message: "registered with an upstream's authorization server",
      upstream: upstream.name,
      issuer: server.issuer,
    });
    return { ok: true, client: { clientId, authMethod, source: "registered" } };
  };

  const event = async (businessId: string, type: string, data: Record<string, unknown>) =>
    await deps.events.record(businessId, [{ type, data: { businessId, ...data } }]);

  const auditOf = (
    caller: Caller,
    actor: NewAuditEntry["actor"],
    accountId: string | null,
    action: string,
    summary: string,
  ): Mutation =>
    deps.audit.entry({
      businessId: caller.businessId,
      accountId,
      actor,
      clientId: null,
      action,
      summary,
      gateId: null,
    });

  /** Marks the connection needs_reconnect once: audit, event, and a mail to the person. */
  const needsReconnect = async (
    upstream: UpstreamConfig,
    caller: Caller,
    problem: string,
  ): Promise<TokenLookup> => {
    const key = connectionKey(upstream.name, caller);
    const message = reconnectMessage(upstream, caller);
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) return notConnected(upstream, caller);
      if (entry.value.status === "needs_reconnect") {
        return { ok: false, reason: "needs_reconnect", message };
      }
      const account = await deps.accounts.getAccount(caller.accountId);
      const events = await event(caller.businessId, "upstream.refresh_failed", {
        upstream: upstream.name,
        accountId: caller.accountId,
      });
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
          auditOf(
            caller,
            "operator",
            caller.accountId,
            "upstream_refresh_failed",
            `The sign-in to ${upstream.title} could not be renewed (${problem}); the person was asked to reconnect`,
          ),
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
      return { ok: false, reason: "needs_reconnect", message };
    }
    return unavailable(upstream);
  };

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

  const reconnectMessage = (upstream: UpstreamConfig, caller: Caller) =>
    `Your ${upstream.title} sign-in could no longer be renewed: reconnect your account at ${
      connectUrl(upstream.name, caller.businessId)
    }, then call again`;
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

  /**
   * Refreshes under the lease. `force`: the upstream refused the current token, so even one that
   * has not expired is replaced (unless another refresh already replaced it).
   */
  const refresh = async (
    upstream: UpstreamConfig,
    caller: Caller,
    rejectedToken: string | null,
  ): Promise<TokenLookup> => {
    const key = connectionKey(upstream.name, caller);
    const waitUntil = now() + LEASE_WAIT_MS;
    for (;;) {
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) return notConnected(upstream, caller);
      const record = entry.value;
      if (record.status === "needs_reconnect") {
        return {
          ok: false,
          reason: "needs_reconnect",
          message: reconnectMessage(upstream, caller),
        };
      }
      const pair = await records.openPair(key, record.tokens);
      const stale = rejectedToken === null
        ? _expiring(record, now())
        : pair.accessToken === rejectedToken;
      if (!stale) return { ok: true, token: pair.accessToken };
      if (record.lease !== null && record.lease.until > now()) {
        // Another replica refreshes: its pair will be in the record when it is done. A holder
        // that died keeps the lease till it runs out: the call answers before that.
        if (now() >= waitUntil) {
          return stillValid(upstream, record, pair.accessToken, rejectedToken);
        }
        await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
        continue;
      }
      if (pair.refreshToken === null) {
        return await needsReconnect(upstream, caller, "it gave no refresh token");
      }
      const lease = { until: now() + leaseMs, holder: `${holder}.${randomSecret(6)}` };
      const taken = await store.commit([{ key, version: entry.version }], [{
        type: "set",
        key,
        value: { ...record, lease },
      }]);
      if (!taken) continue;
      const outcome = await refreshTokens(
        record.server,
        await records.credentials(upstream.name, record.client),
        { refreshToken: pair.refreshToken, resource: record.resource },
        http,
      );
      if (!outcome.ok) {
        if (outcome.permanent) return await needsReconnect(upstream, caller, outcome.problem);
        await whileLeased(key, lease.holder, (current) => ({ ...current, lease: null }));
        logEvent(log, {
          level: "warn",
          message: "upstream token refresh failed; will retry on the next call",
          upstream: upstream.name,
          problem: outcome.problem,
        });
        return stillValid(upstream, record, pair.accessToken, rejectedToken);
      }
      const sealed = await records.sealPair(key, {
        accessToken: outcome.tokens.accessToken,
        refreshToken: outcome.tokens.refreshToken ?? pair.refreshToken,
      });
      // The rotated pair lands in the commit that ends our lease. Lost the lease (it ran out
      // and another process took it): that refresh's pair stands, and is read again.
      const saved = await whileLeased(key, lease.holder, (current) => ({
        ...current,
        tokens: sealed,
        expiresAt: outcome.tokens.expiresAt,
        obtainedAt: now(),
        refreshedAt: now(),
        lease: null,
        problem: null,
      }));
      if (saved) return { ok: true, token: outcome.tokens.accessToken };
    }
  };

  /** Without a renewed token: one that has not expired yet (nor been refused) still serves. */
  const stillValid = (
    upstream: UpstreamConfig,
    record: ConnectionRecord,
    accessToken: string,
    rejectedToken: string | null,
  ): TokenLookup =>
    record.expiresAt !== null && record.expiresAt > now() && rejectedToken === null
      ? { ok: true, token: accessToken }
      : unavailable(upstream);

  /** Changes the record while `holder` still holds its lease; false once it does not. */
  const whileLeased = async (
    key: Key,
    leaseHolder: string,
    change: (record: ConnectionRecord) => ConnectionRecord,
  ): Promise<boolean> => {
    for (;;) {
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null || entry.value.lease?.holder !== leaseHolder) return false;
      const value = change(entry.value);
      if (await store.commit([{ key, version: entry.version }], [{ type: "set", key, value }])) {
        return true;
      }
    }
  };

  const once = (upstream: UpstreamConfig, caller: Caller, rejected: string | null) => {
    const id = `${connectionKey(upstream.name, caller).join("\n")}\n${rejected ?? ""}`;
    let pending = refreshing.get(id);
    if (pending === undefined) {
      pending = refresh(upstream, caller, rejected).finally(() => refreshing.delete(id));
      refreshing.set(id, pending);
    }
    return pending;
  };

  return {
    connectUrl,
    redirectUri,
    clientDocumentUrl,

    async begin({ upstream, caller, sessionId, then }) {
      if (upstream.auth === null) {
        return { ok: false, problem: `${upstream.title} needs no sign-in of its own` };
      }
      const found = await discover(upstream);
      if (!found.ok) return { ok: false, problem: found.problem };
      const { server, resource } = found.value;
      const client = await clientFor(upstream, upstream.auth, server);
      if (!client.ok) return client;
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
          scopes: upstream.auth.scopes ?? found.value.scopes,
        }),
      };
    },

    async authorizationEndpoint(upstream) {
      if (upstream.auth === null) return null;
      const found = await discover(upstream);
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
      const client = await records.credentials(upstream.name, pending.client);
      const outcome = await exchangeCode(pending.server, client, {
        code: answer.code,
        codeVerifier: await vault.open(`verifier:${upstream.name}`, pending.verifier),
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
      };
      for (let attempt = 0; attempt < 5; attempt++) {
        const current = await store.get<ConnectionRecord>(connection);
        const events = await event(caller.businessId, "upstream.connected", {
          upstream: upstream.name,
          accountId: caller.accountId,
        });
        const committed = await store.commit(
          [{ key: connection, version: current?.version ?? null }, ...events.checks],
          [
            { type: "set", key: connection, value: record },
            auditOf(
              caller,
              "human",
              caller.accountId,
              "upstream_connected",
              `${previous === null ? "Connected" : "Reconnected"} their ${upstream.title} account`,
            ),
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

    async accessToken(upstream, caller) {
      const key = connectionKey(upstream.name, caller);
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) return notConnected(upstream, caller);
      if (entry.value.status === "needs_reconnect") {
        return {
          ok: false,
          reason: "needs_reconnect",
          message: reconnectMessage(upstream, caller),
        };
      }
      if (!_expiring(entry.value, now())) {
        // The record is read on every call (another replica may have disconnected or
        // refreshed it); opening the box only when it changed.
        const id = key.join("\n");
        const known = opened.get(id);
        if (known?.version === entry.version) return { ok: true, token: known.token };
        const token = (await records.openPair(key, entry.value.tokens)).accessToken;
        opened.set(id, { version: entry.version, token });
        return { ok: true, token };
      }
      return await once(upstream, caller, null);
    },

    rejected: (upstream, caller, token) => once(upstream, caller, token),
    refused: needsReconnect,

    disconnect: records.disconnect,
  };
}

/** Whether the access token should be refreshed before use. */
function _expiring(record: ConnectionRecord, at: number): boolean {
  if (record.expiresAt === null) return false;
  const lifetime = record.expiresAt - record.obtainedAt;
  return record.expiresAt - at <= Math.min(REFRESH_AHEAD_MS, lifetime / 4);
}

function _url(upstream: UpstreamConfig): string {
  if (upstream.transport.kind !== "http") {
    throw new Error("a person's sign-in needs an HTTP upstream");
  }
  return upstream.transport.url;
}
