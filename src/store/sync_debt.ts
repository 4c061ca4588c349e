/**
 * The SQLite store's deferred commits (store.ts Durability): which commit may leave its disk sync
 * to later, and when the commits left unsynced must be synced by one of their own. A synced
 * commit syncs the write-ahead log as a whole, so it pays for every deferred commit before it.
 * Times are the monotonic clock's, in milliseconds.
 */

/** The longest a deferred commit waits for its sync. */
export const DEFERRED_SYNC_MS = 500;

export interface SyncDebt {
  /** Whether a commit asked to be deferred may be: not once the oldest unsynced one is due. */
  mayDefer(at: number): boolean;
  /**
   * A deferred commit was written at `at`. Returns in how many milliseconds a sync is due when it
   * is the first one unsynced (the caller schedules that sync), else null.
   */
  deferred(at: number): number | null;
  /** A synced commit (or a sync) was written: no commit before it waits any more. */
  synced(): void;
  /** Whether a deferred commit still waits for its sync. */
  owed(): boolean;
}

export function createSyncDebt(windowMs = DEFERRED_SYNC_MS): SyncDebt {
  let since: number | null = null;
  return {
    mayDefer: (at) => since === null || at - since < windowMs,
    deferred(at) {
      if (since !== null) return null;
      since = at;
      return windowMs;
    },
    synced() {
      since = null;
    },
    owed: () => since !== null,
  };
}
