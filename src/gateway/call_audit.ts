/**
 * The audit entries of upstream calls, written behind their answers: the upstream acted whatever
 * our store does, so a call's answer does not wait for its entry's commit (a whole disk sync on
 * an embedded store). Entries of concurrent calls share a commit (AuditLog.append's group
 * commit). The entries answered but not yet stored are bounded: past MAX_UNSTORED, a call's
 * answer waits for its own entry (back-pressure, never an entry dropped), so a crash (kill -9,
 * power loss) loses at most that many, and in practice the one commit under way
 * (docs/gateway.md "Audit durability"). An entry the store refuses is logged whole (it holds no
 * secrets); `settle` waits for every entry before shutdown.
 */
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import type { NewAuditEntry } from "../workspace/domain/audit.ts";

/** Entries of answered calls that may wait for the store at once. */
export const MAX_UNSTORED = 256;

export interface CallAudit {
  /**
   * Starts storing the entry; resolves at once, or once it is stored (or logged) when
   * MAX_UNSTORED entries are waiting already.
   */
  record(entry: NewAuditEntry): Promise<void>;
  /** Resolves once every entry recorded so far is stored or logged. */
  settle(): Promise<void>;
}

export function createCallAudit(deps: {
  readonly append: (entry: NewAuditEntry) => Promise<void>;
  readonly log: LogSink;
  readonly maxUnstored?: number;
}): CallAudit {
  const max = deps.maxUnstored ?? MAX_UNSTORED;
  const unstored = new Set<Promise<void>>();
  return {
    record(entry) {
      const stored = deps.append(entry).catch((error: unknown) =>
        logEvent(deps.log, {
          level: "error",
          message: "audit entry of an upstream call not stored",
          ...entry,
          ...describeError(error),
        })
      ).finally(() => unstored.delete(stored));
      unstored.add(stored);
      return unstored.size > max ? stored : Promise.resolve();
    },
    async settle() {
      await Promise.all(unstored);
    },
  };
}
