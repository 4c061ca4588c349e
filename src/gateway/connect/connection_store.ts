/**
 * People's upstream connections as stored, and their ends: the records (tokens only sealed,
 * bound to the record they belong to), our registrations at upstream authorization servers,
 * and disconnecting (revoked upstream where it offers revocation, RFC 7009, then deleted, with
 * one audit entry and one event). The server and the admin commands (removing a member,
 * deleting an account or a business) end connections through here alike.
 *
 * Connections live under the business (`["ws", businessId, …]`): a backup carries them, sealed;
 * without the key file they are of no use to whoever holds the backup.
 */
import type { Accounts } from "../../accounts/model.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import type { EventOutbox } from "../../events/event_outbox.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import type { Entry, Key, Mutation, Store } from "../../store/store.ts";
import type { AuditLog, NewAuditEntry } from "../../workspace/domain/audit.ts";
import type { Caller } from "../upstream_set.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { type ClientCredentials, revokeToken } from "./oauth_client.ts";
import { type Sealed, type TokenVault, VaultError } from "./vault.ts";

export type ConnectionStatus = "connected" | "needs_reconnect";

/** A connection as pages show it: never its tokens. */
export interface ConnectionView {
  readonly upstream: string;
  readonly businessId: string;
  readonly accountId: string;
  readonly status: ConnectionStatus;
  readonly connectedAt: number;
  readonly refreshedAt: number | null;
  /** Why it needs reconnecting, in words; null while connected. */
  readonly problem: string | null;
  /** Scopes the upstream asked for since (insufficient_scope) that a reconnect will ask for. */
  readonly wanted: readonly string[];
}

/** The client Vestibule is at an upstream's authorization server, as stored. */
export interface StoredClient {
  readonly clientId: string;
  readonly authMethod: ClientCredentials["authMethod"];
  /** Where its secret lives: the upstreams file, its registration record, or nowhere. */
  readonly source: "operator" | "registered" | "document";
}

export interface ConnectionRecord {
  readonly status: ConnectionStatus;
  readonly resource: string;
  readonly server: AuthorizationServer;
  readonly client: StoredClient;
  /** `{accessToken, refreshToken}`, sealed for this record. */
  readonly tokens: Sealed;
  readonly expiresAt: number | null;
  readonly obtainedAt: number;
  readonly connectedAt: number;
  readonly refreshedAt: number | null;
  /** Set while one process refreshes (one refresh at a time across replicas). */
  readonly lease: { readonly until: number; readonly holder: string } | null;
  readonly problem: string | null;
  /** The scopes asked for when it was connected (absent in records made before they were kept). */
  readonly scopes?: readonly string[];
  /** Scopes the upstream's insufficient_scope challenges asked for since, not yet asked for. */
  readonly wanted?: readonly string[];
}

export interface TokenPair {
  readonly accessToken: string;
  readonly refreshToken: string | null;
}

/** A dynamic registration, per upstream (re-made when the server or our redirect changes). */
export interface RegistrationRecord {
  readonly issuer: string;
  readonly redirectUri: string;
  readonly clientId: string;
  readonly authMethod: ClientCredentials["authMethod"];
  readonly secret: Sealed | null;
}

const CONNECTION = "upstream_connection";

/** `["ws", businessId, "upstream_connection", upstream, accountId]`: goes with the business. */
export function connectionKey(upstream: string, caller: Caller): Key {
  return ["ws", caller.businessId, CONNECTION, upstream, caller.accountId];
}

export const registrationKey = (upstream: string): Key => ["upstream_registration", upstream];

/** An audit entry about a person's connection, in its business (by them unless `accountId`). */
export function connectionAudit(
  audit: Pick<AuditLog, "entry">,
  caller: Caller,
  entry: {
    readonly actor: NewAuditEntry["actor"];
    readonly accountId?: string | null;
    readonly action: string;
    readonly summary: string;
  },
): Mutation {
  return audit.entry({
    businessId: caller.businessId,
    accountId: entry.accountId === undefined ? caller.accountId : entry.accountId,
    actor: entry.actor,
    clientId: null,
    action: entry.action,
    summary: entry.summary,
    gateId: null,
  });
}

/** Who ended a connection, for its audit entry. */
export interface Disconnector {
  readonly actor: "human" | "operator";
  readonly accountId: string | null;
}

export interface ConnectionStore {
  read(upstream: string, caller: Caller): Promise<Entry<ConnectionRecord> | null>;
  sealPair(key: Key, pair: TokenPair): Promise<Sealed>;
  openPair(key: Key, sealed: Sealed): Promise<TokenPair>;
  sealSecret(upstream: string, secret: string): Promise<Sealed>;
  /** Whether the registration's secret opens under the key file now (not once its key is gone). */
  registrationOpens(upstream: string, record: RegistrationRecord): Promise<boolean>;
  /** The stored client with its secret, for a token or revocation request. */
  credentials(upstream: string, client: StoredClient): Promise<ClientCredentials>;
  view(key: Key, record: ConnectionRecord): ConnectionView;
  listOfBusiness(businessId: string): Promise<ConnectionView[]>;
  /** Revokes both tokens where the server allows it (best effort: they are deleted anyway). */
  revoke(upstream: string, key: Key, record: ConnectionRecord): Promise<void>;
  /** Revokes, deletes and records who did it. False: there was none. */
  disconnect(upstream: string, caller: Caller, by: Disconnector): Promise<boolean>;
  /** Every connection of an account, a business, or an account in a business, as the operator. */
  disconnectAll(filter: { readonly accountId?: string; readonly businessId?: string }): Promise<
    number
  >;
  /**
   * Seals every stored token and secret again under the vault's first key: how many, and how
   * many no key opens (left as they are: their people reconnect, the registration is made again).
   */
  reseal(): Promise<{ resealed: number; unopened: number }>;
}

export interface ConnectionStoreDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly vault: TokenVault;
  readonly log: LogSink;
  readonly audit: Pick<AuditLog, "entry">;
  readonly events: EventOutbox;
  readonly accounts: Pick<Accounts, "getAccount">;
  /** The upstream's file entry (its operator-registered client's secret), by name. */
  readonly upstream: (name: string) => UpstreamConfig | undefined;
  readonly fetch?: typeof fetch;
}

const connectionContext = (key: Key) => `connection:${key.join("/")}`;
const registrationContext = (upstream: string) => `registration:${upstream}`;

export function createConnectionStore(deps: ConnectionStoreDeps): ConnectionStore {
  const { store, vault, log } = deps;
  const http = { ...(deps.fetch ? { fetch: deps.fetch } : {}), now: deps.now };

  const sealPair = (key: Key, pair: TokenPair) =>
    vault.seal(connectionContext(key), JSON.stringify(pair));
  const openPair = async (key: Key, sealed: Sealed): Promise<TokenPair> =>
    JSON.parse(await vault.open(connectionContext(key), sealed)) as TokenPair;

  const credentials = async (
    upstream: string,
    client: StoredClient,
  ): Promise<ClientCredentials> => {
    let secret: string | null = null;
    if (client.source === "operator") {
      secret = deps.upstream(upstream)?.auth?.client?.secret ?? null;
    } else if (client.source === "registered") {
      const record = await store.get<RegistrationRecord>(registrationKey(upstream));
      // The secret of another registration (made again since) is no secret of this client.
      if (record?.value.secret && record.value.clientId === client.clientId) {
        secret = await vault.open(registrationContext(upstream), record.value.secret);
      }
    }
    return { clientId: client.clientId, clientSecret: secret, authMethod: client.authMethod };
  };

  const view = (key: Key, record: ConnectionRecord): ConnectionView => ({
    upstream: String(key[3]),
    businessId: String(key[1]),
    accountId: String(key[4]),
    status: record.status,
    connectedAt: record.connectedAt,
    refreshedAt: record.refreshedAt,
    problem: record.problem,
    wanted: record.wanted ?? [],
  });

  const revoke = async (upstream: string, key: Key, record: ConnectionRecord) => {
    if (record.server.revocationEndpoint === null) return;
    try {
      const pair = await openPair(key, record.tokens);
      const client = await credentials(upstream, record.client);
      if (pair.refreshToken !== null) {
        await revokeToken(record.server, client, {
          token: pair.refreshToken,
          hint: "refresh_token",
        }, http);
      }
      await revokeToken(record.server, client, {
        token: pair.accessToken,
        hint: "access_token",
      }, http);
    } catch (error) {
      logEvent(log, {
        level: "warn",
        message: "upstream tokens not revoked (they are deleted all the same)",
        upstream,
        problem: (error as Error).message,
      });
    }
  };

  const disconnect = (upstream: string, caller: Caller, by: Disconnector) =>
    _disconnect(deps, revoke, upstream, caller, by);

  const connections = (businessId?: string) => _connections(store, businessId);

  return {
    read: (upstream, caller) => store.get<ConnectionRecord>(connectionKey(upstream, caller)),
    sealPair,
    openPair,
    sealSecret: (upstream, secret) => vault.seal(registrationContext(upstream), secret),
    async registrationOpens(upstream, record) {
      if (record.secret === null) return true;
      try {
        await vault.open(registrationContext(upstream), record.secret);
        return true;
      } catch (error) {
        if (error instanceof VaultError) return false;
        throw error;
      }
    },
    credentials,
    view,
    async listOfBusiness(businessId) {
      const found: ConnectionView[] = [];
      for await (const entry of connections(businessId)) found.push(view(entry.key, entry.value));
      return found;
    },
    revoke,
    disconnect,
    async disconnectAll(filter) {
      const ended: { upstream: string; caller: Caller }[] = [];
      for await (const entry of connections(filter.businessId)) {
        const accountId = String(entry.key[4]);
        if (filter.accountId !== undefined && accountId !== filter.accountId) continue;
        ended.push({
          upstream: String(entry.key[3]),
          caller: { businessId: String(entry.key[1]), accountId },
        });
      }
      let count = 0;
      for (const { upstream, caller } of ended) {
        if (await disconnect(upstream, caller, { actor: "operator", accountId: null })) count++;
      }
      return count;
    },
    reseal: () => _reseal(deps, connections()),
  };
}

/** Revokes, deletes and records who did it (one audit entry, one event). False: there was none. */
async function _disconnect(
  deps: ConnectionStoreDeps,
  revoke: ConnectionStore["revoke"],
  upstream: string,
  caller: Caller,
  by: Disconnector,
): Promise<boolean> {
  const { store } = deps;
  const key = connectionKey(upstream, caller);
  const entry = await store.get<ConnectionRecord>(key);
  if (entry === null) return false;
  await revoke(upstream, key, entry.value);
  const account = await deps.accounts.getAccount(caller.accountId);
  const title = deps.upstream(upstream)?.title ?? upstream;
  const whose = by.accountId === caller.accountId
    ? "their"
    : `${account?.email ?? "a former member"}'s`;
  const audit = () =>
    connectionAudit(deps.audit, caller, {
      actor: by.actor,
      accountId: by.accountId,
      action: "upstream_disconnected",
      summary: `Disconnected ${whose} ${title} account; its tokens were revoked and deleted`,
    });
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await store.get<ConnectionRecord>(key);
    if (current === null) return false;
    const events = await deps.events.record(caller.businessId, [{
      type: "upstream.disconnected",
      data: { businessId: caller.businessId, upstream, accountId: caller.accountId },
    }]);
    const mutations: Mutation[] = [
      { type: "delete", key },
      audit(),
      ...events.mutations,
    ];
    if (await store.commit([{ key, version: current.version }, ...events.checks], mutations)) {
      deps.events.dispatch();
      return true;
    }
  }
  return false;
}

/** Every connection record, or those of one business. */
async function* _connections(store: Store, businessId?: string) {
  const prefix: Key = businessId === undefined ? ["ws"] : ["ws", businessId, CONNECTION];
  for await (const entry of store.list<ConnectionRecord>(prefix)) {
    if (entry.key[2] === CONNECTION) yield entry;
  }
}

/**
 * Seals every stored token and secret again under the vault's first key: how many, and how many
 * no key opens (left as they are: their people reconnect, the registration is made again).
 */
async function _reseal(
  { store, vault, now }: ConnectionStoreDeps,
  connections: AsyncIterable<Entry<ConnectionRecord>>,
): Promise<{ resealed: number; unopened: number }> {
  const counts = { resealed: 0, unopened: 0 };
  /** `box` sealed again under the first key; null when no key of the file opens it. */
  const again = async (context: string, box: Sealed): Promise<Sealed | null> => {
    try {
      return await vault.seal(context, await vault.open(context, box));
    } catch (error) {
      if (!(error instanceof VaultError)) throw error;
      counts.unopened++;
      return null;
    }
  };
  for await (const entry of connections) {
    // One being refreshed gets its new pair under the first key anyway.
    const leased = entry.value.lease !== null && entry.value.lease.until > now();
    if (leased || !vault.stale(entry.value.tokens)) continue;
    const tokens = await again(connectionContext(entry.key), entry.value.tokens);
    if (tokens === null) continue;
    const check = [{ key: entry.key, version: entry.version }];
    const value = { ...entry.value, tokens };
    if (await store.commit(check, [{ type: "set", key: entry.key, value }])) counts.resealed++;
  }
  for await (const entry of store.list<RegistrationRecord>(["upstream_registration"])) {
    const secret = entry.value.secret;
    if (secret === null || !vault.stale(secret)) continue;
    const sealed = await again(registrationContext(String(entry.key[1])), secret);
    if (sealed === null) continue;
    const check = [{ key: entry.key, version: entry.version }];
    const value = { ...entry.value, secret: sealed };
    if (await store.commit(check, [{ type: "set", key: entry.key, value }])) counts.resealed++;
  }
  return counts;
}
