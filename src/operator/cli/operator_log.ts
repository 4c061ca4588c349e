/**
 * The operator's own log: commands whose record cannot live in a business's audit log, because
 * they delete that business (and its log with it), an account, or change what every business
 * shares (the signing key). Entries name ids only, never an e-mail address or a name: a deletion
 * on request must not leave the person behind in its own record. Newest first.
 */
import type { Store } from "../../store/store.ts";

export interface OperatorLogEntry {
  readonly id: string;
  readonly at: number;
  /** The admin command. */
  readonly command: string;
  readonly summary: string;
}

const PREFIX = "operator_log";

/** Far enough in the future that the inverted time stays positive; orders newest first. */
const LATEST = 9_999_999_999_999;

export async function appendOperatorLog(
  store: Store,
  now: () => number,
  command: string,
  summary: string,
): Promise<void> {
  const entry: OperatorLogEntry = { id: crypto.randomUUID(), at: now(), command, summary };
  await store.set([PREFIX, LATEST - entry.at, entry.id], entry);
}

export async function listOperatorLog(store: Store, limit: number): Promise<OperatorLogEntry[]> {
  const entries: OperatorLogEntry[] = [];
  for await (const stored of store.list<OperatorLogEntry>([PREFIX], { limit })) {
    entries.push(stored.value);
  }
  return entries;
}
