/**
 * A fresh access token for each call of a person's connection, refreshed before it expires.
 *
 * One refresh at a time per connection across replicas: a lease on the record itself (a commit
 * on its version), and the rotated pair is saved in the commit that ends the lease. A refresh
 * the authorization server refuses for good marks the connection `needs_reconnect` once; so do
 * tokens, or a registration secret, that no longer open (the key file lost the key that sealed
 * them): the person connects again, with the link.
 */
import { BoundedMap } from "../../bounded_map.ts";
import type { UpstreamConfig } from "../../config/upstreams.ts";
import { logEvent, type LogSink } from "../../http/request_log.ts";
import { randomSecret } from "../../secrets.ts";
import type { Key, Store } from "../../store/store.ts";
import type { Caller } from "../upstream_set.ts";
import { connectionKey, type ConnectionRecord, type ConnectionStore } from "./connection_store.ts";
import { type OAuthClientDeps, refreshTokens } from "./oauth_client.ts";
import type { Reconnects, TokenLookup } from "./reconnects.ts";
import { VaultError } from "./vault.ts";

export interface ConnectionTokens {
  /** The token for a call of `upstream` by `caller`, refreshed first when it is about to expire. */
  accessToken(upstream: UpstreamConfig, caller: Caller): Promise<TokenLookup>;
  /** The upstream refused `token` (401): one refresh, or the connection needs reconnecting. */
  rejected(upstream: UpstreamConfig, caller: Caller, token: string): Promise<TokenLookup>;
}

export interface ConnectionTokensDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly log: LogSink;
  readonly records: Pick<ConnectionStore, "openPair" | "sealPair" | "credentials">;
  readonly reconnects: Reconnects;
  readonly fetch?: typeof fetch;
  /** Milliseconds a refresh holds its lease; longer than a refresh may take. */
  readonly leaseMs?: number;
}

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
/** What the person reads (mail, page, tool error) when their kept sign-in no longer opens. */
const UNOPENED = "the sign-in Vestibule kept can no longer be read: its key was replaced";

export function createConnectionTokens(deps: ConnectionTokensDeps): ConnectionTokens {
  const { store, now, log, records, reconnects } = deps;
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  const http: OAuthClientDeps = { ...(deps.fetch ? { fetch: deps.fetch } : {}), now };
  /** This process's refreshes in flight, one per connection. */
  const refreshing = new Map<string, Promise<TokenLookup>>();
  const holder = randomSecret(12);
  /** Access tokens opened, by connection and the record's version they were opened from. */
  const opened = new BoundedMap<string, { version: string; token: string }>(OPENED_TOKENS);

  /**
   * `work`, except that a sealed box that no longer opens marks the connection for reconnecting
   * (once, with the link), never an internal error; the operator's log names the key.
   */
  const opening = async (
    upstream: UpstreamConfig,
    caller: Caller,
    work: () => Promise<TokenLookup>,
  ): Promise<TokenLookup> => {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof VaultError)) throw error;
      logEvent(log, {
        level: "warn",
        message: "a person's upstream tokens no longer open; they are asked to reconnect",
        upstream: upstream.name,
        businessId: caller.businessId,
        accountId: caller.accountId,
        problem: error.message,
      });
      return await reconnects.needed(upstream, caller, UNOPENED);
    }
  };

  /**
   * Refreshes under the lease. `rejectedToken`: the upstream refused it, so even one that has
   * not expired is replaced (unless another refresh already replaced it).
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
      if (entry === null) return reconnects.notConnected(upstream, caller);
      const record = entry.value;
      if (record.status === "needs_reconnect") return reconnects.stillNeeded(upstream, caller);
      const pair = await records.openPair(key, record.tokens);
      const stale = rejectedToken === null
        ? _expiring(record, now())
        : pair.accessToken === rejectedToken;
      if (!stale) return { ok: true, token: pair.accessToken };
      if (record.lease !== null && record.lease.until > now()) {
        // Another replica refreshes: its pair will be in the record when it is done. A holder
        // that died keeps the lease till it runs out: the call answers before that.
        if (now() >= waitUntil) {
          return _stillValid(reconnects, now, upstream, record, pair.accessToken, rejectedToken);
        }
        await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
        continue;
      }
      if (pair.refreshToken === null) {
        return await reconnects.needed(upstream, caller, "it gave no refresh token");
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
        if (outcome.permanent) return await reconnects.needed(upstream, caller, outcome.problem);
        await _whileLeased(store, key, lease.holder, (current) => ({ ...current, lease: null }));
        logEvent(log, {
          level: "warn",
          message: "upstream token refresh failed; will retry on the next call",
          upstream: upstream.name,
          problem: outcome.problem,
        });
        return _stillValid(reconnects, now, upstream, record, pair.accessToken, rejectedToken);
      }
      const sealed = await records.sealPair(key, {
        accessToken: outcome.tokens.accessToken,
        refreshToken: outcome.tokens.refreshToken ?? pair.refreshToken,
      });
      // The rotated pair lands in the commit that ends our lease. Lost the lease (it ran out
      // and another process took it): that refresh's pair stands, and is read again.
      const saved = await _whileLeased(store, key, lease.holder, (current) => ({
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

  const once = (upstream: UpstreamConfig, caller: Caller, rejected: string | null) => {
    const id = `${connectionKey(upstream.name, caller).join("\n")}\n${rejected ?? ""}`;
    let pending = refreshing.get(id);
    if (pending === undefined) {
      pending = opening(upstream, caller, () => refresh(upstream, caller, rejected))
        .finally(() => refreshing.delete(id));
      refreshing.set(id, pending);
    }
    return pending;
  };

  return {
    async accessToken(upstream, caller) {
      const key = connectionKey(upstream.name, caller);
      const entry = await store.get<ConnectionRecord>(key);
      if (entry === null) return reconnects.notConnected(upstream, caller);
      if (entry.value.status === "needs_reconnect") {
        return reconnects.stillNeeded(upstream, caller);
      }
      if (_expiring(entry.value, now())) return await once(upstream, caller, null);
      // The record is read on every call (another replica may have disconnected or refreshed
      // it); opening the box only when it changed.
      const id = key.join("\n");
      const known = opened.get(id);
      if (known?.version === entry.version) return { ok: true, token: known.token };
      return await opening(upstream, caller, async () => {
        const token = (await records.openPair(key, entry.value.tokens)).accessToken;
        opened.set(id, { version: entry.version, token });
        return { ok: true, token };
      });
    },
    rejected: (upstream, caller, token) => once(upstream, caller, token),
  };
}

/** Whether the access token should be refreshed before use. */
function _expiring(record: ConnectionRecord, at: number): boolean {
  if (record.expiresAt === null) return false;
  const lifetime = record.expiresAt - record.obtainedAt;
  return record.expiresAt - at <= Math.min(REFRESH_AHEAD_MS, lifetime / 4);
}

/** Without a renewed token: one that has not expired yet (nor been refused) still serves. */
function _stillValid(
  reconnects: Reconnects,
  now: () => number,
  upstream: UpstreamConfig,
  record: ConnectionRecord,
  accessToken: string,
  rejectedToken: string | null,
): TokenLookup {
  return record.expiresAt !== null && record.expiresAt > now() && rejectedToken === null
    ? { ok: true, token: accessToken }
    : reconnects.unavailable(upstream);
}

/** Changes the record while `holder` still holds its lease; false once it does not. */
async function _whileLeased(
  store: Store,
  key: Key,
  leaseHolder: string,
  change: (record: ConnectionRecord) => ConnectionRecord,
): Promise<boolean> {
  for (;;) {
    const entry = await store.get<ConnectionRecord>(key);
    if (entry === null || entry.value.lease?.holder !== leaseHolder) return false;
    const value = change(entry.value);
    if (await store.commit([{ key, version: entry.version }], [{ type: "set", key, value }])) {
      return true;
    }
  }
}
