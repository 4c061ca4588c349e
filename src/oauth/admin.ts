/**
 * What the admin command (and /account) need from the authorization server, as plain
 * functions over the store: list clients and grants, revoke a client or a grant, rotate
 * the signing key. No HTTP, no fetching of metadata documents.
 */
import type { Store } from "../store/store.ts";
import type { ClientRecord } from "./clients.ts";
import { type GrantRecord, listGrantsOfClient, revokeClientGrants } from "./grants.ts";
import { createSigningKeys } from "./signing_keys.ts";

export {
  type GrantSummary,
  listGrantsOfAccount,
  listGrantsOfClient,
  revokeGrant,
} from "./grants.ts";

export interface ClientSummary {
  readonly clientId: string;
  readonly clientName: string | null;
  readonly registration: "dynamic" | "metadata_document";
  readonly redirectUris: readonly string[];
  readonly issuedAt: number | null;
  readonly grants: number;
}

/**
 * Every client known to the store: registered ones, and metadata-document clients that
 * hold grants (those are not stored as registrations).
 */
export async function listClients(store: Store): Promise<ClientSummary[]> {
  const out = new Map<string, ClientSummary>();
  for await (const entry of store.list<ClientRecord>(["oauth", "client"])) {
    const c = entry.value;
    out.set(c.clientId, {
      clientId: c.clientId,
      clientName: c.clientName,
      registration: c.registration,
      redirectUris: c.redirectUris,
      issuedAt: c.issuedAt,
      grants: 0,
    });
  }
  const counts = new Map<string, { name: string; count: number }>();
  for await (const grant of store.list<GrantRecord>(["oauth", "grant"])) {
    const seen = counts.get(grant.value.clientId);
    counts.set(grant.value.clientId, {
      name: grant.value.clientName,
      count: (seen?.count ?? 0) + 1,
    });
  }
  for (const [clientId, { name, count }] of counts) {
    const known = out.get(clientId);
    out.set(
      clientId,
      known ? { ...known, grants: count } : {
        clientId,
        clientName: name,
        registration: "metadata_document",
        redirectUris: [],
        issuedAt: null,
        grants: count,
      },
    );
  }
  return [...out.values()];
}

/**
 * Revokes a client: every grant it holds ends now (its tokens stop verifying) and a
 * registration is deleted, so its client_id is unknown from then on. Returns the number of
 * grants revoked, or null when the client is not known at all.
 */
export async function revokeClient(store: Store, clientId: string): Promise<number | null> {
  const registered = await store.get<ClientRecord>(["oauth", "client", clientId]);
  const grants = await listGrantsOfClient(store, clientId);
  if (!registered && grants.length === 0) return null;
  const revoked = await revokeClientGrants(store, clientId);
  if (registered) await store.delete(registered.key);
  return revoked;
}

/**
 * Makes a new ES256 key current. The previous key stays in the JWKS (and verifies) until
 * the access tokens it signed have expired (one hour, plus five minutes of margin).
 * A running server picks up the new key within 30 seconds.
 */
export async function rotateSigningKey(
  store: Store,
  now: () => number = Date.now,
): Promise<{ kid: string; retired: string | null }> {
  return await createSigningKeys({ store, now }).rotate();
}
