import type { AtomicCheck, Entry, Key, Mutation, SetOptions, Store } from "./store.ts";

/** What is kept under each key: the value and its own expiry, since KV's expireIn is lazy. */
interface Stored {
  readonly v: unknown;
  readonly exp: number | null;
}

/**
 * Deno KV backend: a file (SQLite, crash-safe transactions) or `:memory:`.
 * `now` is injected so expiry is testable without sleeping.
 */
export async function openKvStore(path: string, now: () => number = Date.now): Promise<Store> {
  if (path !== ":memory:") await _ensureParentDirectory(path);
  const kv = await Deno.openKv(path);
  const live = (stored: Stored | null): stored is Stored =>
    stored !== null && (stored.exp === null || stored.exp > now());
  const wrap = (value: unknown, expireIn: number | undefined): Stored => ({
    v: value,
    exp: expireIn === undefined ? null : now() + expireIn,
  });
  const kvOptions = (
    expireIn: number | undefined,
  ) => (expireIn === undefined ? undefined : { expireIn });

  return {
    async get<T>(key: Key): Promise<Entry<T> | null> {
      const entry = await kv.get<Stored>(key as Deno.KvKey);
      if (!live(entry.value)) return null;
      return { key, value: entry.value.v as T, version: entry.versionstamp! };
    },
    async set(key: Key, value: unknown, options: SetOptions = {}) {
      await kv.set(key as Deno.KvKey, wrap(value, options.expireIn), kvOptions(options.expireIn));
    },
    async delete(key: Key) {
      await kv.delete(key as Deno.KvKey);
    },
    async commit(checks: readonly AtomicCheck[], mutations: readonly Mutation[]) {
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
    },
    async *list<T>(prefix: Key, options: { readonly limit?: number } = {}) {
      let count = 0;
      for await (const entry of kv.list<Stored>({ prefix: prefix as Deno.KvKey })) {
        if (!live(entry.value)) continue;
        yield { key: entry.key as Key, value: entry.value.v as T, version: entry.versionstamp };
        if (options.limit !== undefined && ++count >= options.limit) return;
      }
    },
    close() {
      kv.close();
    },
  };
}

async function _ensureParentDirectory(path: string): Promise<void> {
  const slash = path.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
}
