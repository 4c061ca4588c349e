// People's upstream connections as the admin commands end them: removing a member, deleting an
// account or a business revoke their upstream tokens (where the upstream offers revocation)
// before the records go; `reseal-upstream-tokens` seals them again under the key file's first
// key (the rotation's last step); `forget-upstream-registration` drops Vestibule's registration
// at an upstream's authorization server, so that the next person to connect registers again.
import { NO_EVENTS } from "../../events/event_outbox.ts";
import { loadUpstreams, NO_UPSTREAMS } from "../../gateway/upstreams_file.ts";
import {
  type ConnectionStore,
  createConnectionStore,
  registrationKey,
  type RegistrationRecord,
} from "../../gateway/connect/connection_store.ts";
import { loadVault } from "../../gateway/connect/vault.ts";
import { createAccounts } from "../../accounts/accounts.ts";
import { createAuditLog } from "../../workspace/domain/audit.ts";
import type { Key } from "../../store/store.ts";
import { type AdminDeps, AdminError } from "./command.ts";
import { appendOperatorLog } from "./operator_log.ts";

/** What ending someone's connections did. */
export interface EndedConnections {
  readonly disconnected: number;
  /** False when no key file let the tokens be read to be revoked: they were only deleted. */
  readonly revoked: boolean;
}

/** The store of connections, or null when VESTIBULE_UPSTREAM_KEY_FILE is unset. */
async function _connections(deps: AdminDeps): Promise<ConnectionStore | null> {
  const { config, store, now } = deps;
  if (config.upstreamKeyFile === null) return null;
  const vault = await loadVault(config.upstreamKeyFile).catch((error: Error) => {
    throw new AdminError(error.message);
  });
  const upstreams = config.upstreamsFile === null
    ? NO_UPSTREAMS
    : await loadUpstreams(config.upstreamsFile).catch((error: Error) => {
      throw new AdminError(error.message);
    });
  return createConnectionStore({
    store,
    now,
    vault,
    // The operator's actions are in the audit log and the operator log, not sent as events.
    events: NO_EVENTS,
    audit: createAuditLog(store, now),
    accounts: createAccounts(store, now),
    log: deps.err,
    upstream: (name) => upstreams.upstreams.find((upstream) => upstream.name === name),
  });
}

/**
 * Ends the connections of an account (in one business, or everywhere), or of a whole business:
 * revoked and deleted; only deleted when no key file is configured.
 */
export async function endConnections(
  deps: AdminDeps,
  filter: { readonly accountId?: string; readonly businessId?: string },
): Promise<EndedConnections> {
  const connections = await _connections(deps);
  if (connections !== null) {
    return { disconnected: await connections.disconnectAll(filter), revoked: true };
  }
  const keys: Key[] = [];
  const prefix: Key = filter.businessId === undefined ? ["ws"] : ["ws", filter.businessId];
  for await (const entry of deps.store.list(prefix)) {
    if (entry.key[2] !== "upstream_connection") continue;
    if (filter.accountId !== undefined && entry.key[4] !== filter.accountId) continue;
    keys.push(entry.key);
  }
  for (const key of keys) await deps.store.delete(key);
  return { disconnected: keys.length, revoked: keys.length === 0 };
}

/** The rotation's last step: every stored token sealed under the first key. */
export async function resealConnections(
  deps: AdminDeps,
): Promise<{ resealed: number; unopened: number }> {
  const connections = await _connections(deps);
  if (connections === null) {
    throw new AdminError("VESTIBULE_UPSTREAM_KEY_FILE is not set: there is no key to seal with");
  }
  return await connections.reseal();
}

/**
 * Deletes the dynamic registration kept for `upstream` (its client id and sealed secret): the
 * next person to connect registers Vestibule again. Connections made with the old client
 * renew with it no more and ask their person to reconnect.
 */
export async function forgetRegistration(
  deps: AdminDeps,
  upstream: string,
): Promise<{ upstream: string; issuer: string; clientId: string }> {
  const key = registrationKey(upstream);
  const entry = await deps.store.get<RegistrationRecord>(key);
  if (entry === null) {
    throw new AdminError(
      `no registration is kept for upstream "${upstream}" (Vestibule registers when a person ` +
        "first connects, unless the upstreams file names its client or the server takes our " +
        "client metadata document)",
    );
  }
  if (!await deps.store.commit([{ key, version: entry.version }], [{ type: "delete", key }])) {
    throw new AdminError(`the registration of upstream "${upstream}" changed meanwhile; try again`);
  }
  const { issuer, clientId } = entry.value;
  await appendOperatorLog(
    deps.store,
    deps.now,
    "forget-upstream-registration",
    `Forgot Vestibule's registration at ${issuer} for upstream ${upstream} (client ${clientId}); ` +
      "the next person to connect registers again",
  );
  return { upstream, issuer, clientId };
}
