/**
 * The authorization transaction between the authorize request and the consent decision,
 * kept server-side: the browser holds only its random id, so client, redirect, scopes,
 * resource and business cannot be tampered with between the steps. Bound to the session
 * that started it; consumed by the decision, so a replayed consent fails.
 */
import type { Entry, Key, Store } from "../store/store.ts";
import { LIFETIMES } from "./issuer.ts";
import { hashSecret, randomSecret } from "../secrets.ts";

export interface Transaction {
  readonly clientId: string;
  readonly clientName: string | null;
  readonly registration: "dynamic" | "metadata_document";
  readonly redirectUri: string;
  readonly state: string | null;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scopes: readonly string[];
  readonly nonce: string | null;
  readonly accountId: string;
  readonly sessionId: string;
  /** Chosen on the business page, or the only business; null until then. */
  readonly businessId: string | null;
  readonly createdAt: number;
}

const txnKey = (hash: string): Key => ["oauth", "txn", hash];

export async function startTransaction(store: Store, txn: Transaction): Promise<string> {
  const id = randomSecret(24);
  await store.set(txnKey(await hashSecret(id)), txn, { expireIn: LIFETIMES.transaction });
  return id;
}

export async function findTransaction(
  store: Store,
  id: string,
): Promise<Entry<Transaction> | null> {
  if (id === "" || id.length > 100) return null;
  return await store.get<Transaction>(txnKey(await hashSecret(id)));
}

/** Records the chosen business, if the transaction is unchanged since it was read. */
export async function chooseBusiness(
  store: Store,
  entry: Entry<Transaction>,
  businessId: string,
  now: number,
): Promise<boolean> {
  const remaining = entry.value.createdAt + LIFETIMES.transaction;
  return await store.commit([{ key: entry.key, version: entry.version }], [{
    type: "set",
    key: entry.key,
    value: { ...entry.value, businessId },
    expireIn: Math.max(1, remaining - now),
  }]);
}

/** Deletes the transaction if unchanged: true for exactly one of concurrent decisions. */
export async function consumeTransaction(
  store: Store,
  entry: Entry<Transaction>,
): Promise<boolean> {
  return await store.commit([{ key: entry.key, version: entry.version }], [
    { type: "delete", key: entry.key },
  ]);
}
