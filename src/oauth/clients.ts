/**
 * Clients: dynamically registered ones live in the store; a client whose `client_id` is an
 * https URL is described by its metadata document, fetched on demand (cimd.ts).
 *
 * A registration belongs to the issuer that made it (RFC 6749 §2.2; MCP 2026-07-28 "Authorization
 * Server Binding"): after the operator changes the issuer, a client registered with the old one
 * is unknown and must register again. Metadata-document client IDs are portable and unbound.
 */
import type { Key, Store } from "../store/store.ts";
import type { ApplicationType, AuthMethod, ClientMetadata, GrantType } from "./client_metadata.ts";
import type { MetadataDocuments } from "./cimd.ts";
import { LIFETIMES } from "./issuer.ts";
import { constantTimeEqual, hashSecret, randomSecret } from "../secrets.ts";
import { listGrantsOfClient } from "./grants.ts";

export interface ClientRecord {
  readonly clientId: string;
  readonly clientName: string | null;
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly GrantType[];
  readonly tokenEndpointAuthMethod: AuthMethod;
  readonly scope: string | null;
  /** Absent on registrations stored before it was recorded, which count as `web`. */
  readonly applicationType?: ApplicationType;
  /**
   * The issuer a dynamic registration was made with; absent on metadata-document clients and
   * on registrations stored before it was recorded, which count as this issuer's.
   */
  readonly issuer?: string;
  /** Confidential clients only: base64url(SHA-256(secret)). */
  readonly secretHash: string | null;
  readonly registration: "dynamic" | "metadata_document";
  readonly issuedAt: number;
  /** Whether a code was ever issued to it; unused registrations expire. */
  readonly used: boolean;
}

export type ClientLookup = { ok: true; client: ClientRecord } | { ok: false; description: string };

export interface Clients {
  /** The client named by `client_id`: a registration, or a metadata document (fetched). */
  lookup(clientId: string): Promise<ClientLookup>;
  /** Stores a new dynamic client; the secret (confidential clients) is returned once. */
  register(metadata: ClientMetadata): Promise<{ client: ClientRecord; secret: string | null }>;
  /** Keeps a registration for good once it obtained a code. */
  markUsed(client: ClientRecord): Promise<void>;
  /** Every stored (dynamic) client, for the admin command. */
  listRegistered(): Promise<ClientRecord[]>;
  /** Forgets a dynamic client (its grants are revoked separately). */
  deleteRegistered(clientId: string): Promise<boolean>;
}

const clientKey = (clientId: string): Key => ["oauth", "client", clientId];

export function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/**
 * The name people know a client by, from what is stored (no metadata document is fetched): its
 * registration's, else the one a live grant was given with; null when neither remains.
 */
export async function storedClientName(store: Store, clientId: string): Promise<string | null> {
  const registered = await store.get<ClientRecord>(clientKey(clientId));
  if (registered?.value.clientName) return registered.value.clientName;
  return (await listGrantsOfClient(store, clientId))[0]?.clientName ?? null;
}

export function createClients(
  deps: { store: Store; now: () => number; documents: MetadataDocuments; issuer: string },
): Clients {
  const { store, now, documents, issuer } = deps;
  return {
    async lookup(clientId) {
      if (isMetadataDocumentClientId(clientId)) {
        const fetched = await documents.resolve(clientId);
        if (!fetched.ok) return fetched;
        return {
          ok: true,
          client: {
            clientId,
            ...fetched.metadata,
            secretHash: null,
            registration: "metadata_document",
            issuedAt: now(),
            used: true,
          },
        };
      }
      if (clientId === "" || clientId.length > 200) {
        return { ok: false, description: "Unknown client_id" };
      }
      const entry = await store.get<ClientRecord>(clientKey(clientId));
      if (!entry) {
        return { ok: false, description: `Unknown client_id ${JSON.stringify(clientId)}` };
      }
      if ((entry.value.issuer ?? issuer) !== issuer) {
        return {
          ok: false,
          description: `Unknown client_id ${
            JSON.stringify(clientId)
          }: it was registered with another authorization server; register again with ${issuer}`,
        };
      }
      return { ok: true, client: entry.value };
    },

    async register(metadata) {
      const secret = metadata.tokenEndpointAuthMethod === "none" ? null : randomSecret(32);
      const client: ClientRecord = {
        clientId: randomSecret(16),
        ...metadata,
        secretHash: secret === null ? null : await hashSecret(secret),
        registration: "dynamic",
        issuer,
        issuedAt: now(),
        used: false,
      };
      await store.set(clientKey(client.clientId), client, {
        expireIn: LIFETIMES.unusedRegistration,
      });
      return { client, secret };
    },

    async markUsed(client) {
      if (client.used || client.registration !== "dynamic") return;
      const entry = await store.get<ClientRecord>(clientKey(client.clientId));
      if (entry) {
        await store.commit([{ key: entry.key, version: entry.version }], [
          { type: "set", key: entry.key, value: { ...entry.value, used: true } },
        ]);
      }
    },

    async listRegistered() {
      const out: ClientRecord[] = [];
      for await (const entry of store.list<ClientRecord>(["oauth", "client"])) {
        out.push(entry.value);
      }
      return out;
    },

    async deleteRegistered(clientId) {
      const entry = await store.get<ClientRecord>(clientKey(clientId));
      if (!entry) return false;
      await store.delete(entry.key);
      return true;
    },
  };
}

/** Whether `secret` is this confidential client's secret (compared by hash, in constant time). */
export async function secretMatches(client: ClientRecord, secret: string): Promise<boolean> {
  if (client.secretHash === null) return false;
  return constantTimeEqual(await hashSecret(secret), client.secretHash);
}
