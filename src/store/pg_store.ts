/**
 * PostgreSQL backend of the Store, for several processes on one database (npm `postgres`).
 *
 * One table holds every record: the key as bytes that sort like Deno KV's keys
 * (src/store/key_codec.ts), the value as JSON text with the backup format's tags for what JSON
 * cannot carry (src/store/backup.ts; text, not jsonb, which would reorder object keys and refuse
 * "\u0000"), the absolute expiry, and a version drawn from a sequence on every write.
 * Every write goes through one SQL function, vestibule_commit, which first takes a
 * transaction-scoped advisory lock on each key it touches: a commit's checks and mutations happen
 * as one step against every other write from any process, an absent-key check included (a row
 * lock cannot guard a row that does not exist yet). One round trip per write.
 */
import postgres from "postgres";
import { decodeValue, encodeValue } from "./backup.ts";
import { decodeKey, encodeKey, prefixRange } from "./key_codec.ts";
import { DEFAULT_STORE_DEADLINE_MS, guardStore, SNAPSHOT_DEADLINES } from "./store_guard.ts";
import {
  type AtomicCheck,
  type Entry,
  type Key,
  type ListOptions,
  type Mutation,
  type SetOptions,
  type Store,
  type StoredRecord,
  StoreUnavailableError,
} from "./store.ts";

export interface PgStoreOptions {
  /** `postgres://` or `postgresql://` URL; `sslmode=require|verify-full` in its query. */
  readonly url: string;
  /** Replaces a password in the URL (VESTIBULE_DATA_PASSWORD_FILE). */
  readonly password?: string | null;
  /** Connections kept open to the database at most. */
  readonly poolSize: number;
  /** How long an operation may wait for the database (VESTIBULE_DATA_TIMEOUT; store_guard.ts). */
  readonly deadlineMs?: number;
  readonly now?: () => number;
}

/**
 * The database could not be used at start-up: unreachable, refused the login, or the role may
 * not create or use the tables. The message names no password.
 */
export class PgStoreError extends Error {
  override name = "PgStoreError";
}

/** The table layout's versions; each step runs once, in one transaction with its stamp. */
const LAYOUT: readonly string[] = [
  `CREATE SEQUENCE vestibule_versions;
   CREATE TABLE vestibule_records (
     key bytea PRIMARY KEY,
     value text NOT NULL,
     expires_at bigint,
     version bigint NOT NULL DEFAULT nextval('vestibule_versions')
   );
   CREATE INDEX vestibule_records_expiry ON vestibule_records (expires_at)
     WHERE expires_at IS NOT NULL;
   -- One commit in one round trip (ops: see _commitDocument). Volatile: under read committed each
   -- of its statements takes a new snapshot, so the checks, read once the locks are held, see
   -- everything the commits that held them before wrote.
   CREATE FUNCTION vestibule_commit(ops jsonb, at bigint) RETURNS boolean
   LANGUAGE plpgsql VOLATILE AS $$
   DECLARE
     lock bigint;
     c jsonb;
     current bigint;
   BEGIN
     FOR lock IN SELECT l::bigint FROM jsonb_array_elements_text(ops->'locks')
       WITH ORDINALITY AS t(l, n) ORDER BY n
     LOOP
       PERFORM pg_advisory_xact_lock(lock);
     END LOOP;
     FOR c IN SELECT value FROM jsonb_array_elements(ops->'checks') LOOP
       current := NULL;
       SELECT version INTO current FROM vestibule_records
         WHERE key = decode(c->>'key', 'hex') AND (expires_at IS NULL OR expires_at > at);
       IF current::text IS DISTINCT FROM c->>'version' THEN
         RETURN false;
       END IF;
     END LOOP;
     INSERT INTO vestibule_records (key, value, expires_at)
       SELECT decode(s->>'key', 'hex'), s->>'value', (s->>'expiresAt')::bigint
       FROM jsonb_array_elements(ops->'sets') AS s
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at,
         version = nextval('vestibule_versions');
     DELETE FROM vestibule_records
       WHERE key IN (SELECT decode(d, 'hex') FROM jsonb_array_elements_text(ops->'deletes') AS d);
     RETURN true;
   END $$;`,
];

/** The advisory lock (two-int form, apart from the per-key bigint locks) of the layout step. */
const LAYOUT_LOCK = [0x56455354, 1] as const; // "VEST"

/** Records read per query while listing. */
const LIST_BATCH = 500;

/** Expired rows read as absent at once; they are deleted by a write at most this often. */
export const PURGE_INTERVAL_MS = 60_000;

export async function openPgStore(options: PgStoreOptions): Promise<Store> {
  const now = options.now ?? Date.now;
  const deadlineMs = options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
  const sql = _connect(options, deadlineMs);
  try {
    await _prepareLayout(sql);
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw new PgStoreError(_describeError(error, options.password ?? null, options.url));
  }

  // Expiries are whole milliseconds: against a clock with fractions, its floor decides the same.
  const liveAt = (at: number) => sql`(expires_at IS NULL OR expires_at > ${Math.floor(at)})`;
  let purgedAt = now();
  const purgeWhenDue = async () => {
    const at = now();
    if (at - purgedAt < PURGE_INTERVAL_MS) return;
    purgedAt = at;
    await sql`DELETE FROM vestibule_records WHERE expires_at <= ${Math.floor(at)}`;
  };
  /** Every write: one call of vestibule_commit, in a transaction of its own. */
  const commit = async (checks: readonly AtomicCheck[], mutations: readonly Mutation[]) => {
    const at = now();
    const ops = sql.json(_commitDocument(checks, mutations, at));
    const [row] = await sql<{ ok: boolean }[]>`
      SELECT vestibule_commit(${ops}, ${Math.floor(at)}) AS ok`;
    if (row!.ok) await purgeWhenDue();
    return row!.ok;
  };

  const unavailable = (error: unknown) =>
    _isOutage(error)
      ? new StoreUnavailableError(_describeError(error, options.password ?? null, options.url))
      : error;
  const guarded =
    <A extends unknown[], R>(op: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      try {
        return await op(...args);
      } catch (error) {
        throw unavailable(error);
      }
    };
  const store: Store = {
    async get<T>(key: Key): Promise<Entry<T> | null> {
      const [row] = await sql<{ value: string; version: string }[]>`
        SELECT value, version FROM vestibule_records
        WHERE key = ${encodeKey(key)} AND ${liveAt(now())}`;
      return row ? { key, value: _parse(key, row.value) as T, version: row.version } : null;
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
      let after: Uint8Array | null = options.after === undefined ? null : encodeKey(options.after);
      let left = options.limit ?? Infinity;
      while (left > 0) {
        const batch = Math.min(left, LIST_BATCH);
        const rows: { key: Uint8Array; value: string; version: string }[] = await sql`
          SELECT key, value, version FROM vestibule_records
          WHERE key >= ${from} AND key < ${to} AND ${liveAt(now())}
            ${after === null ? sql`` : reverse ? sql`AND key < ${after}` : sql`AND key > ${after}`}
          ORDER BY key ${reverse ? sql`DESC` : sql``} LIMIT ${batch}`;
        for (const row of rows) {
          const key = decodeKey(row.key);
          yield { key, value: _parse(key, row.value) as T, version: row.version };
        }
        if (rows.length < batch) return;
        left -= rows.length;
        after = rows.at(-1)!.key;
      }
    },
    async snapshot(prefix: Key = []): Promise<StoredRecord[]> {
      const { from, to } = prefixRange(prefix);
      // Repeatable read: every row as of one snapshot, whatever commits meanwhile.
      const rows = await sql.begin(
        "isolation level repeatable read read only",
        async (tx) => {
          await tx`SELECT set_config('statement_timeout', ${
            String(2 * deadlineMs * SNAPSHOT_DEADLINES)
          }, true)`;
          return await tx<
            { key: Uint8Array; value: string; expires_at: string | null; version: string }[]
          >`
          SELECT key, value, expires_at, version FROM vestibule_records
          WHERE key >= ${from} AND key < ${to} AND ${liveAt(now())}
          ORDER BY key`;
        },
      );
      return rows.map((row) => {
        const key = decodeKey(row.key);
        return {
          key,
          value: _parse(key, row.value),
          expiresAt: row.expires_at === null ? null : Number(row.expires_at),
          version: row.version,
        };
      });
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
  const unguarded: Store = {
    get: <T>(key: Key) => guarded(store.get<T>)(key),
    set: guarded(store.set),
    delete: guarded(store.delete),
    commit: guarded(store.commit),
    async *list<T>(prefix: Key, options?: ListOptions) {
      try {
        yield* store.list<T>(prefix, options);
      } catch (error) {
        throw unavailable(error);
      }
    },
    snapshot: guarded(store.snapshot),
    close: store.close,
  };
  // Any read will do as the short circuit's probe: it answers only when the database does.
  return guardStore(unguarded, { deadlineMs, probe: () => unguarded.get(["ready"]) });
}

/**
 * Errors of the connection rather than the request: the client's own (refused, reset, closed,
 * timed out, host not found) and SQLSTATE classes 08 (connection), 28 (authorization), 53300
 * (too many connections), 57014 (the statement outlived its statement_timeout: a lock held by
 * a stuck transaction) and 57P01-57P03 (the server shutting down or starting).
 */
function _isOutage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return /^(E(CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|PIPE|HOSTUNREACH|NETUNREACH)|CONNECTION_|CONNECT_TIMEOUT)/
    .test(code) ||
    /^(08|28)/.test(code) || ["53300", "57014", "57P01", "57P02", "57P03"].includes(code);
}

function _json(key: Key, value: unknown): string {
  return JSON.stringify(encodeValue(value, key));
}

function _parse(key: Key, text: string): unknown {
  return decodeValue(JSON.parse(text), JSON.stringify(key));
}

/**
 * What vestibule_commit takes: the keys' locks in ascending order (one order everywhere, so two
 * commits never wait for each other's), the checks, and the last mutation of each key (the one
 * that counts, as in a KV atomic operation). Keys travel as hex.
 */
function _commitDocument(
  checks: readonly AtomicCheck[],
  mutations: readonly Mutation[],
  at: number,
): postgres.JSONValue {
  const hex = (key: Key) =>
    Array.from(encodeKey(key), (b) => b.toString(16).padStart(2, "0")).join("");
  const last = new Map<string, Mutation>();
  for (const m of mutations) last.set(hex(m.key), m);
  const locks = [
    ...new Set([...checks.map((c) => c.key), ...mutations.map((m) => m.key)]
      .map((key) => _lockId(encodeKey(key)))),
  ].sort((a, b) => (a < b ? -1 : 1));
  const sets = [...last].filter(([, m]) => m.type === "set").map(([key, m]) => {
    const { value, expireIn } = m as Extract<Mutation, { type: "set" }>;
    // Rounded up to a whole millisecond (a bigint column): never earlier than asked.
    const expiresAt = expireIn === undefined ? null : Math.ceil(at + expireIn);
    return { key, value: _json(m.key, value), expiresAt };
  });
  return {
    locks: locks.map(String),
    checks: checks.map((c) => ({ key: hex(c.key), version: c.version })),
    sets,
    deletes: [...last].filter(([, m]) => m.type === "delete").map(([key]) => key),
  };
}

/** A key's advisory lock: FNV-1a over its bytes, a signed 64-bit number (a clash only waits). */
function _lockId(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return BigInt.asIntN(64, hash);
}

function _connect(options: PgStoreOptions, deadlineMs: number) {
  const url = new URL(options.url);
  const ssl = url.searchParams.get("sslmode");
  const password = options.password ?? decodeURIComponent(url.password);
  // Every setting is given: the client reads a PG* variable for each one left out, which the
  // start task may not (--allow-env=VESTIBULE_*,PGAPPNAME; PGAPPNAME it reads regardless).
  const settings: postgres.Options<Record<string, never>> = {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port === "" ? 5432 : Number(url.port),
    database: decodeURIComponent(url.pathname.slice(1)),
    user: decodeURIComponent(url.username),
    pass: () => password,
    // libpq's meanings: require encrypts without checking the certificate; verify-full checks it.
    ssl: ssl === "require" ? "require" : ssl === "verify-full" ? "verify-full" : false,
    max: options.poolSize,
    connect_timeout: 10,
    idle_timeout: 0,
    backoff: (attempt) => Math.min(3 ** attempt / 100, 20) * (0.5 + Math.random() / 2),
    keep_alive: 60,
    prepare: true,
    debug: false,
    fetch_types: false,
    publications: "alltables",
    // A store must write: a standby (read-only) server is refused at connection.
    target_session_attrs: "read-write",
    onnotice: () => {},
    // A statement waiting on a lock held by a stuck transaction is ended by the server twice a
    // deadline after it began: long after its request was answered 503 (store_guard.ts), so a
    // commit that was about to land still may, and soon enough that it frees its connection.
    connection: { application_name: "vestibule", statement_timeout: 2 * deadlineMs },
  };
  // As the client's defaults, in forms its types do not list: each connection replaced after its
  // own 30 to 60 minutes, so they do not all reconnect at once.
  return postgres(Object.assign(settings, {
    sslnegotiation: null,
    max_pipeline: 100,
    max_lifetime: () => 60 * (30 + Math.random() * 30),
  }));
}

async function _prepareLayout(sql: postgres.Sql): Promise<void> {
  await sql.begin(async (tx) => {
    // Two replicas starting at once: the second waits here, then finds the layout made.
    await tx`SELECT pg_advisory_xact_lock(${LAYOUT_LOCK[0]}, ${LAYOUT_LOCK[1]})`;
    await tx`CREATE TABLE IF NOT EXISTS vestibule_layout (version integer NOT NULL)`;
    const [row] = await tx<{ version: number }[]>`SELECT version FROM vestibule_layout`;
    const version = row?.version ?? 0;
    if (version > LAYOUT.length) {
      throw new PgStoreError(
        `the tables are at layout version ${version}, newer than this release knows ` +
          `(${LAYOUT.length}): run the release that made them`,
      );
    }
    for (const step of LAYOUT.slice(version)) await tx.unsafe(step);
    if (row === undefined) await tx`INSERT INTO vestibule_layout VALUES (${LAYOUT.length})`;
    else await tx`UPDATE vestibule_layout SET version = ${LAYOUT.length}`;
  });
}

/** What went wrong with the database, in one line, the password (if any) replaced by ***. */
function _describeError(error: unknown, password: string | null, url: string): string {
  const secret = password ?? decodeURIComponent(new URL(url).password);
  let text: string;
  if (error instanceof PgStoreError) text = error.message;
  else if (error instanceof postgres.PostgresError) {
    text = `${error.message} (SQLSTATE ${error.code})`;
    if (error.code === "42501") {
      text += ": the role needs CREATE on the schema, or an owner to create the tables first";
    }
  } else text = error instanceof Error ? error.message : String(error);
  return secret === "" ? text : text.replaceAll(secret, "***");
}
