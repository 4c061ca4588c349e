/**
 * The audit entries of upstream calls, written behind their answers: the upstream acted whatever
 * our store does, so a call's answer does not wait for its entry's commit (a whole disk sync on
 * an embedded store). Entries are gathered for FLUSH_MS (or BATCH of them) and handed to the
 * audit log together, which commits them in one commit: on SQLite, whose commits hold the event
 * loop while the disk syncs, nothing else could gather while a commit is under way. The entries
 * answered but not yet stored are bounded: past MAX_UNSTORED, a call's answer waits for its own
 * entry, stored with those handed over with it (back-pressure, never an entry dropped), so a
 * crash (kill -9, power loss) loses at most that many, in practice the last few milliseconds'
 * (docs/gateway.md "Audit durability"). An entry the store refuses is logged whole (it holds no
 * secrets); `settle` stores what is gathered at once and waits for every entry, before shutdown.
 */
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import type { NewAuditEntry, RefusedEntry } from "../workspace/domain/audit.ts";

/** Entries of answered calls that may wait for the store at once. */
export const MAX_UNSTORED = 256;
/** How long the first entry of a batch waits for others. */
export const FLUSH_MS = 10;
/** Entries handed over at once: one commit's worth (AuditLog's group commit takes 64). */
const BATCH = 64;

export interface CallAudit {
  /**
   * Gathers the entry for storing; resolves at once, or once it is stored (or logged) when
   * MAX_UNSTORED entries are waiting already.
   */
  record(entry: NewAuditEntry): Promise<void>;
  /** Stores what is gathered now, and resolves once every entry recorded so far is stored. */
  settle(): Promise<void>;
}

/** What `record` answers within the bound: the same settled promise for every call. */
const RECORDED = Promise.resolve();

interface Batch {
  readonly entries: NewAuditEntry[];
  readonly stored: Promise<void>;
  readonly flush: () => void;
}

export function createCallAudit(deps: {
  /**
   * Stores the entries handed over together, in a shared commit (AuditLog.appendAll); never
   * rejects, resolving with those not stored.
   */
  readonly appendAll: (entries: readonly NewAuditEntry[]) => Promise<readonly RefusedEntry[]>;
  readonly log: LogSink;
  readonly maxUnstored?: number;
  readonly flushMs?: number;
}): CallAudit {
  const max = deps.maxUnstored ?? MAX_UNSTORED;
  const flushMs = deps.flushMs ?? FLUSH_MS;
  const batches = new Set<Promise<void>>();
  let unstored = 0;
  let open: Batch | null = null;

  const refused = (entries: readonly RefusedEntry[]) => {
    for (const { entry, error } of entries) {
      logEvent(deps.log, {
        level: "error",
        message: "audit entry of an upstream call not stored",
        ...entry,
        ...describeError(error),
      });
    }
  };

  const gather = (): Batch => {
    const entries: NewAuditEntry[] = [];
    let start!: () => void;
    const stored = new Promise<void>((resolve) => start = resolve)
      .then(() => deps.appendAll(entries))
      .then(refused, (error: unknown) => refused(entries.map((entry) => ({ entry, error }))))
      .then(() => {
        unstored -= entries.length;
        batches.delete(stored);
      });
    batches.add(stored);
    const timer = setTimeout(() => batch.flush(), flushMs);
    const batch: Batch = {
      entries,
      stored,
      flush() {
        clearTimeout(timer);
        if (open === batch) open = null;
        start();
      },
    };
    return batch;
  };

  return {
    record(entry) {
      const batch = open ??= gather();
      batch.entries.push(entry);
      unstored++;
      if (batch.entries.length >= BATCH) batch.flush();
      return unstored > max ? batch.stored : RECORDED;
    },
    async settle() {
      open?.flush();
      await Promise.all(batches);
    },
  };
}
