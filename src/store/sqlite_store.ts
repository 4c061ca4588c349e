/**
 * SQLite backend of the Store on `node:sqlite` (built into Node 22.5+ and Deno 2): the embedded
 * store both runtimes have. One table, laid out as PostgreSQL's (pg_store.ts): the key as bytes
 * that sort like Deno KV's keys (key_codec.ts; SQLite compares blobs with memcmp), the value as
 * JSON text with the backup format's tags, the absolute expiry in milliseconds, and a version
 * drawn from a counter on every commit.
 *
 * Every write is one `BEGIN IMMEDIATE` transaction: it takes the file's write lock before its
 * checks read, so checks and mutations happen as one step against every other writer, in this
 * process or another on the same file (WAL lets readers go on meanwhile). node:sqlite is
 * synchronous: a busy file is not waited for inside SQLite (that would stall the event loop)
 * but retried after an asynchronous pause (busy_retry.ts). Commits are refused, as Deno KV
 * refuses them, beyond the bounds in limits.ts, so that what this store holds loads into any.
 * A commit syncs the write-ahead log before it returns (`synchronous = FULL`), a deferred one
 * (store.ts Durability) does not: a sync holds the event loop for the disk's whole flush, and a
 * later commit or a sync of its own pays for it within DEFERRED_SYNC_MS (sync_debt.ts).
 */
import { DatabaseSync } from "node:sqlite";
import { clearImmediate, setImmediate } from "node:timers";
import { ensurePrivateStoreFile } from "../private_files.ts";
import { decodeValue, encodeValue } from "./backup.ts";
import { backoff, type BusyPause, retryWhenBusy } from "./busy_retry.ts";
import { decodeKey, encodeKey, prefixRange } from "./key_codec.ts";
import { createSyncDebt, DEFERRED_SYNC_MS } from "./sync_debt.ts";
import { commitProblem } from "./limits.ts";
import type {
  AtomicCheck,
  CommitOptions,
  Durability,
  Entry,
  Key,
  ListOptions,
  Mutation,
  SetOptions,
  Store,
  StoredRecord,
} from "./store.ts";

/** The layout's versions (PRAGMA user_version); each step runs once, in one transaction. */
const LAYOUT: readonly string[] = [
  `CREATE TABLE vestibule_records (
     key BLOB PRIMARY KEY,
     value TEXT NOT NULL,
     expires_at INTEGER,
     version INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX vestibule_records_expiry ON vestibule_records (expires_at)
     WHERE expires_at IS NOT NULL;
   CREATE TABLE vestibule_versions (last INTEGER NOT NULL);
   INSERT INTO vestibule_versions VALUES (0);`,
];

/** Records read per query while listing. */
const LIST_BATCH = 500;

/** Expired rows read as absent at once; they are deleted by a write at most this often. */
export const PURGE_INTERVAL_MS = 60_000;

/** Milliseconds SQLite itself waits for a lock, blocking, before the asynchronous retries. */
const LOCK_WAIT_MS = 5;

/**
 * The store at `path` (created owner-only with its directories) or `:memory:`.
 * `now` is injected so expiry is testable without sleeping; `pause` as in busy_retry.ts.
 */
export async function openSqliteStore(
  path: string,
  now: () => number = Date.now,
  pause: BusyPause = backoff,
): Promise<Store> {
  await ensurePrivateStoreFile(path);
  const turns = _loopTurns();
  const whenFree = <T>(work: () => T) => retryWhenBusy(() => turns.run(work), pause);
  const db = new DatabaseSync(path, { timeout: LOCK_WAIT_MS });
  try {
    await whenFree(() => _prepare(db, path));
  } catch (error) {
    db.close();
    throw error;
  }
  const q = _statements(db);

  const syncs = _deferredSyncs(db, q, whenFree);
  let purgedAt = now();
  const commitNow = (
    checks: readonly AtomicCheck[],
    mutations: readonly Mutation[],
    options: CommitOptions,
  ) => {
    const at = now();
    const live = Math.floor(at);
    const deferred = syncs.begin(options.durability ?? "synced");
    const committed = _writing(db, () => {
      for (const check of checks) {
        const row = q.version.get(encodeKey(check.key), live) as { version: number } | undefined;
        if ((row === undefined ? null : String(row.version)) !== check.version) return false;
      }
      // The last mutation of a key is the one that counts, as in a KV atomic operation.
      const last = new Map<string, Mutation>();
      for (const m of mutations) last.set(JSON.stringify(m.key), m);
      const version = mutations.length === 0 ? 0 : (q.nextVersion.get() as { last: number }).last;
      for (const m of last.values()) {
        if (m.type === "delete") q.remove.run(encodeKey(m.key));
        else {
          // Rounded up to a whole millisecond: never earlier than asked.
          const expiresAt = m.expireIn === undefined ? null : Math.ceil(at + m.expireIn);
          q.upsert.run(encodeKey(m.key), _json(m.key, m.value), expiresAt, version);
        }
      }
      if (at - purgedAt >= PURGE_INTERVAL_MS) {
        purgedAt = at;
        q.purge.run(live);
      }
      return true;
    });
    // A transaction that wrote nothing wrote nothing to sync.
    if (committed && mutations.length > 0) syncs.wrote(deferred);
    return committed;
  };
  const commit = (
    checks: readonly AtomicCheck[],
    mutations: readonly Mutation[],
    options: CommitOptions = {},
  ) => {
    const problem = commitProblem(checks, mutations);
    if (problem !== null) return Promise.reject(new TypeError(problem));
    return whenFree(() => commitNow(checks, mutations, options));
  };

  return {
    get<T>(key: Key): Promise<Entry<T> | null> {
      return whenFree(() => {
        const row = q.get.get(encodeKey(key), Math.floor(now())) as
          | { value: string; version: number }
          | undefined;
        return row === undefined
          ? null
          : { key, value: _parse(key, row.value) as T, version: String(row.version) };
      });
    },
    async set(key: Key, value: unknown, options: SetOptions = {}) {
      await commit([], [{ type: "set", key, value, ...options }]);
    },
    async delete(key: Key) {
      await commit([], [{ type: "delete", key }]);
    },
    commit,
    async *list<T>(prefix: Key, options: ListOptions = {}) {
      const { from, to } = prefixRange(prefix);
      const reverse = options.reverse ?? false;
      const page = reverse ? q.pageDown : q.pageUp;
      // Past the whole range when there is no `after`: the bound is then the range's own end.
      let after: Uint8Array = options.after === undefined
        ? (reverse ? to : from)
        : encodeKey(options.after);
      let left = options.limit ?? Infinity;
      while (left > 0) {
        const batch = Math.min(left, LIST_BATCH);
        const rows = await whenFree(() =>
          page.all(from, to, after, Math.floor(now()), batch) as {
            key: Uint8Array;
            value: string;
            version: number;
          }[]
        );
        for (const row of rows) {
          const key = decodeKey(row.key);
          yield { key, value: _parse(key, row.value) as T, version: String(row.version) };
        }
        if (rows.length < batch) return;
        left -= rows.length;
        after = rows.at(-1)!.key;
      }
    },
    snapshot(prefix: Key = []): Promise<StoredRecord[]> {
      const { from, to } = prefixRange(prefix);
      // One statement reads one snapshot of the file, whatever other processes commit meanwhile.
      return whenFree(() =>
        (q.snapshot.all(from, to, Math.floor(now())) as {
          key: Uint8Array;
          value: string;
          expires_at: number | null;
          version: number;
        }[]).map((row) => {
          const key = decodeKey(row.key);
          return {
            key,
            value: _parse(key, row.value),
            expiresAt: row.expires_at,
            version: String(row.version),
          };
        })
      );
    },
    async close() {
      try {
        await syncs.settle();
      } finally {
        turns.stop();
        db.close();
      }
    },
  };
}

/**
 * Deferred commits (store.ts Durability) on one connection: `begin` sets SQLite's `synchronous`
 * for the next commit and says whether it is deferred, `wrote` keeps the debt of unsynced ones and
 * schedules their sync, `settle` syncs what is owed (before the store closes).
 */
function _deferredSyncs(
  db: DatabaseSync,
  q: ReturnType<typeof _statements>,
  whenFree: <T>(work: () => T) => Promise<T>,
) {
  // `synchronous` is the connection's setting, kept until changed: set only when it changes.
  let synchronous = "FULL";
  const syncing = (full: boolean) => {
    const wanted = full ? "FULL" : "NORMAL";
    if (synchronous === wanted) return;
    db.exec(`PRAGMA synchronous = ${wanted}`);
    synchronous = wanted;
  };
  const debt = createSyncDebt();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A sync of its own: a synced write of the version counter, which syncs the log as a whole.
  const syncNow = () => {
    if (!debt.owed()) return;
    syncing(true);
    _writing(db, () => {
      q.nextVersion.get();
      return true;
    });
    debt.synced();
  };
  const schedule = (ms: number) => {
    timer = setTimeout(() => whenFree(syncNow).catch(() => schedule(DEFERRED_SYNC_MS)), ms);
  };
  return {
    begin(durability: Durability): boolean {
      const deferred = durability === "deferred" && debt.mayDefer(performance.now());
      syncing(!deferred);
      return deferred;
    },
    wrote(deferred: boolean) {
      if (!deferred) {
        debt.synced();
        clearTimeout(timer);
        return;
      }
      const due = debt.deferred(performance.now());
      if (due !== null) schedule(due);
    },
    settle(): Promise<void> {
      clearTimeout(timer);
      return whenFree(syncNow);
    },
  };
}

/** What a burst of synchronous operations may hold the event loop for before it lets it turn. */
const OPS_PER_TURN = 64;
const HOLD_MS = 5;

/**
 * Lets timers and I/O run between synchronous operations. A loop of store calls alone (an
 * import, a migration, 32 commits at once) would otherwise go on in microtasks and never give
 * the event loop a turn: no request would be served until it ended. Once OPS_PER_TURN operations
 * or HOLD_MS have passed with no turn, the next ones wait for one (setImmediate: after the I/O
 * and timers that are due, with no clamp).
 */
function _loopTurns() {
  let ops = 0;
  let since = performance.now();
  let handle: ReturnType<typeof setImmediate> | undefined;
  let turn: Promise<void> | null = null;
  let release = () => {};
  const next = () =>
    turn ??= new Promise<void>((resolve) => {
      release = resolve;
      handle = setImmediate(() => {
        ops = 0;
        since = performance.now();
        turn = null;
        resolve();
      });
    });
  return {
    /** Runs `work` once the loop may be held; in the microtask that checked, so the next sees it. */
    async run<T>(work: () => T): Promise<T> {
      while (ops >= OPS_PER_TURN || performance.now() - since > HOLD_MS) await next();
      ops++;
      next(); // the next turn, whenever it comes, starts the count again
      return work();
    },
    stop() {
      clearImmediate(handle);
      release();
    },
  };
}

/** WAL (readers beside a writer), then the layout, made once even when two processes start. */
function _prepare(db: DatabaseSync, path: string): void {
  if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  _writing(db, () => {
    const { user_version: version } = db.prepare("PRAGMA user_version").get() as {
      user_version: number;
    };
    if (version > LAYOUT.length) {
      throw new Error(
        `the file is at layout version ${version}, newer than this release knows ` +
          `(${LAYOUT.length}): run the release that made it`,
      );
    }
    for (const step of LAYOUT.slice(version)) db.exec(step);
    db.exec(`PRAGMA user_version = ${LAYOUT.length}`);
    return true;
  });
}

/**
 * `work` in one `BEGIN IMMEDIATE` transaction: committed when it returns true, rolled back when it
 * returns false or throws. Returns whether it was committed.
 */
function _writing(db: DatabaseSync, work: () => boolean): boolean {
  db.exec("BEGIN IMMEDIATE");
  try {
    const commit = work();
    db.exec(commit ? "COMMIT" : "ROLLBACK");
    return commit;
  } catch (error) {
    if (db.isTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

const LIVE = "(expires_at IS NULL OR expires_at > ?)";

function _statements(db: DatabaseSync) {
  const page = (direction: "up" | "down") =>
    db.prepare(
      `SELECT key, value, version FROM vestibule_records
       WHERE key >= ? AND key < ? AND key ${direction === "up" ? ">" : "<"} ? AND ${LIVE}
       ORDER BY key ${direction === "up" ? "ASC" : "DESC"} LIMIT ?`,
    );
  return {
    get: db.prepare(`SELECT value, version FROM vestibule_records WHERE key = ? AND ${LIVE}`),
    version: db.prepare(`SELECT version FROM vestibule_records WHERE key = ? AND ${LIVE}`),
    nextVersion: db.prepare("UPDATE vestibule_versions SET last = last + 1 RETURNING last"),
    upsert: db.prepare(
      `INSERT INTO vestibule_records (key, value, expires_at, version) VALUES (?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at,
         version = excluded.version`,
    ),
    remove: db.prepare("DELETE FROM vestibule_records WHERE key = ?"),
    purge: db.prepare("DELETE FROM vestibule_records WHERE expires_at <= ?"),
    pageUp: page("up"),
    pageDown: page("down"),
    snapshot: db.prepare(
      `SELECT key, value, expires_at, version FROM vestibule_records
       WHERE key >= ? AND key < ? AND ${LIVE} ORDER BY key`,
    ),
  };
}

function _json(key: Key, value: unknown): string {
  return JSON.stringify(encodeValue(value, key));
}

function _parse(key: Key, text: string): unknown {
  return decodeValue(JSON.parse(text), JSON.stringify(key));
}
