/**
 * `admin audit`: every business's audit entries (or one's), oldest first, one line each, from a
 * cursor on; with `--follow` it goes on printing new ones as they are stored, for a log shipper
 * or a SIEM to read. The cursor of a line is its entry's time in ms: resuming with
 * `--after CURSOR` prints what came after that millisecond. An entry is printed once its
 * millisecond has settled (SETTLE_MS old), so an entry of that millisecond committed a moment
 * later is not skipped by a resumed reader.
 */
import { createAccounts } from "../../accounts/accounts.ts";
import { type AuditEntry, auditPositionAt, createAuditLog } from "../../workspace/domain/audit.ts";
import type { Store } from "../../store/store.ts";

/** How old an entry's millisecond must be before it is printed (a group commit's lag, and more). */
export const SETTLE_MS = 2_000;
/** How often a follower looks again. */
export const FOLLOW_POLL_MS = 1_000;

export interface AuditStreamOptions {
  readonly business: string | undefined;
  /** Print entries after this millisecond (a previous line's cursor); from the start without. */
  readonly after: number;
  readonly follow: boolean;
  readonly json: boolean;
}

export interface AuditStreamDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly out: (line: string) => void;
  /** Waits between looks; a timer by default. */
  readonly wait?: (ms: number) => Promise<void>;
  /** Ends a follower (the CLI runs until it is killed). */
  readonly stop?: AbortSignal;
}

export async function streamAudit(
  options: AuditStreamOptions,
  deps: AuditStreamDeps,
): Promise<void> {
  const { store, now, out } = deps;
  const audit = createAuditLog(store, now);
  const accounts = createAccounts(store, now);
  const wait = deps.wait ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let cursor = options.after;
  for (;;) {
    const settled = now() - SETTLE_MS;
    const businesses = options.business === undefined
      ? (await accounts.listBusinesses()).map((b) => b.id)
      : [options.business];
    const batch: AuditEntry[] = [];
    for (const business of businesses) {
      const entries = audit.scan(business, { newer: true, after: auditPositionAt(cursor) });
      for await (const { entry } of entries) {
        if (entry.at > settled) break;
        batch.push(entry);
      }
    }
    batch.sort((a, b) => a.at - b.at);
    for (const entry of batch) out(formatLine(entry, options.json));
    if (batch.length > 0) cursor = batch.at(-1)!.at;
    if (!options.follow || deps.stop?.aborted) return;
    await wait(FOLLOW_POLL_MS);
    if (deps.stop?.aborted) return;
  }
}

/** One entry: a JSON line with its `cursor`, or a line for a person. */
function formatLine(entry: AuditEntry, json: boolean): string {
  if (json) return JSON.stringify({ cursor: String(entry.at), ...entry });
  return `${
    new Date(entry.at).toISOString()
  } ${entry.businessId} ${entry.actor} ${entry.action}: ${entry.summary}`;
}
