import { ensurePrivateStoreFile } from "../private_files.ts";
import { backoff, type BusyPause, retryWhenBusy } from "./busy_retry.ts";
import { runtime } from "../runtime/current.ts";
import {
  type AtomicCheck,
  type Entry,
  type Key,
  type ListOptions,
  type Mutation,
  type SetOptions,
  type Store,
  StoreBusyError,
  type StoredRecord,
} from "./store.ts";

/** What is kept under each key: the value and its own expiry, since KV's expireIn is lazy. */
interface Stored {
  readonly v: unknown;
  readonly exp: number | null;
}

/** Passes over the whole store a snapshot may take before it gives up (see snapshot). */
const SNAPSHOT_PASSES = 10;

/**
 * Deno KV backend: a file (SQLite, crash-safe transactions) or `:memory:`.
 * `now` is injected so expiry is testable without sleeping. The file and the files SQLite keeps
 * beside it (`-wal`, `-shm`, created with the file's mode) are owner-only.
 */
export async function openKvStore(
  path: string,
  now: () => number = Date.now,
  pause: BusyPause = backoff,
): Promise<Store> {
  await ensurePrivateStoreFile(path);
  const openKv = runtime.openKv;
  if (openKv === null) throw new Error(`${runtime.description} has no Deno KV`);
  // Opening a new file sets it up in a write transaction, which SQLite refuses at once while
  // another process (a second replica starting beside this one) is doing the same.
  const kv = await retryWhenBusy(() => openKv(path), pause);
  // Deno KV retries its reads itself but hands an atomic write's SQLITE_BUSY to the caller: a
  // commit whose checks read first cannot be upgraded to a write transaction while another
  // connection writes, and SQLite says so at once (sqlite.org/lang_transaction.html §2.1); a
  // plain write gives up after a 5-second busy timeout. Either way nothing was written.
  const whenFree = <T>(write: () => Promise<T>) => retryWhenBusy(write, pause);
  const live = (stored: Stored | null): stored is Stored =>
    stored !== null && (stored.exp === null || stored.exp > now());
  const wrap = (value: unknown, expireIn: number | undefined): Stored => ({
    v: value,
    exp: expireIn === undefined ? null : now() + expireIn,
  });
  const kvOptions = (
    expireIn: number | undefined,
  ) => (expireIn === undefined ? undefined : { expireIn });

  const commitOnce = async (checks: readonly AtomicCheck[], mutations: readonly Mutation[]) => {
    const op = kv.atomic();
    for (const check of checks) {
      if (check.version === null) {
        // An expired record still occupies its key in KV: absent means absent-or-expired.
        const current = await kv.get<Stored>(check.key as Deno.KvKey);
        op.check({
          key: check.key as Deno.KvKey,
          versionstamp: live(current.value) ? null : current.versionstamp,
        });
        if (live(current.value)) return false;
      } else {
        op.check({ key: check.key as Deno.KvKey, versionstamp: check.version });
      }
    }
    for (const m of mutations) {
      if (m.type === "set") {
        op.set(m.key as Deno.KvKey, wrap(m.value, m.expireIn), kvOptions(m.expireIn));
      } else op.delete(m.key as Deno.KvKey);
    }
    return (await op.commit()).ok;
  };

  return {
    async get<T>(key: Key): Promise<Entry<T> | null> {
      const entry = await kv.get<Stored>(key as Deno.KvKey);
      if (!live(entry.value)) return null;
      return { key, value: entry.value.v as T, version: entry.versionstamp! };
    },
    async set(key: Key, value: unknown, options: SetOptions = {}) {
      await whenFree(() =>
        kv.set(key as Deno.KvKey, wrap(value, options.expireIn), kvOptions(options.expireIn))
      );
    },
    async delete(key: Key) {
      await whenFree(() => kv.delete(key as Deno.KvKey));
    },
    commit(checks: readonly AtomicCheck[], mutations: readonly Mutation[]) {
      return whenFree(() => commitOnce(checks, mutations));
    },
    async *list<T>(prefix: Key, options: ListOptions = {}) {
      const { after, reverse = false } = options;
      // KV's start bound includes its key and its end bound does not: going forward, the key
      // `after` itself is skipped below.
      const selector: Deno.KvListSelector = after === undefined
        ? { prefix: prefix as Deno.KvKey }
        : reverse
        ? { prefix: prefix as Deno.KvKey, end: after as Deno.KvKey }
        : { prefix: prefix as Deno.KvKey, start: after as Deno.KvKey };
      let count = 0;
      for await (const entry of kv.list<Stored>(selector, { reverse })) {
        if (!live(entry.value)) continue;
        if (!reverse && after !== undefined && _sameKey(entry.key as Key, after)) continue;
        yield { key: entry.key as Key, value: entry.value.v as T, version: entry.versionstamp };
        if (options.limit !== undefined && ++count >= options.limit) return;
      }
    },
    async snapshot(prefix: Key = []): Promise<StoredRecord[]> {
      // A KV list reads in batches, each its own transaction: one pass is no snapshot. When two
      // passes agree on every key and versionstamp (never reused), no write touched a record
      // they hold from its first read to its second, nor added one that was still there, so the
      // second pass is one moment's view (a record both missed came and went between them).
      const pass = async () => {
        const entries: Deno.KvEntry<Stored>[] = [];
        for await (
          const entry of kv.list<Stored>(
            { prefix: prefix as Deno.KvKey },
            { consistency: "strong" },
          )
        ) {
          entries.push(entry);
        }
        return entries;
      };
      let previous = await pass();
      for (let passes = 2; passes <= SNAPSHOT_PASSES; passes++) {
        const current = await pass();
        if (_sameVersions(previous, current)) {
          return current.filter((entry) => live(entry.value)).map((entry) => ({
            key: entry.key as Key,
            value: entry.value.v,
            expiresAt: entry.value.exp,
            version: entry.versionstamp,
          }));
        }
        previous = current;
      }
      throw new StoreBusyError(
        `the store changed during each of ${SNAPSHOT_PASSES} passes over it`,
      );
    },
    close() {
      kv.close();
      return Promise.resolve();
    },
  };
}

function _sameVersions(a: readonly Deno.KvEntry<unknown>[], b: readonly Deno.KvEntry<unknown>[]) {
  return a.length === b.length && a.every((entry, i) =>
    entry.versionstamp === b[i]!.versionstamp &&
    JSON.stringify(entry.key) === JSON.stringify(b[i]!.key)
  );
}

function _sameKey(a: Key, b: Key): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
