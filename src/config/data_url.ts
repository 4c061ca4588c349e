// VESTIBULE_DATA: a Deno KV or SQLite path, or a PostgreSQL URL checked before anything connects.
import * as v from "valibot";

/** `VESTIBULE_DATA=postgres://…`: the PostgreSQL store (src/store/pg_store.ts). */
export interface PostgresConfig {
  /** As given; show it only through maskDataUrl. */
  readonly url: string;
  /** VESTIBULE_DATA_PASSWORD_FILE, read at start-up instead of a password in the URL. */
  readonly passwordFile: string | null;
  /** VESTIBULE_DATA_POOL_SIZE: connections each process keeps at most. */
  readonly poolSize: number;
  /** VESTIBULE_DATA_TIMEOUT: how long a store operation may wait (src/store/store_guard.ts). */
  readonly deadlineMs: number;
}

export const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** A file name that selects the SQLite store: `….sqlite`, `….sqlite3` or `….db`. */
export const SQLITE_PATH = /\.(sqlite3?|db)$/;

/** The store backends; `store/open.ts` opens the one VESTIBULE_DATA names. */
export type StoreKind = "kv" | "sqlite" | "postgres";

/**
 * Which store VESTIBULE_DATA names, by its form: PostgreSQL by its URL, SQLite by its file
 * name's ending, Deno KV otherwise (`:memory:` included).
 */
export function storeKind(data: string): StoreKind {
  return POSTGRES_URL.test(data) ? "postgres" : SQLITE_PATH.test(data) ? "sqlite" : "kv";
}

/** The URL with its password replaced by `***`: what logs and error messages may show. */
export function maskDataUrl(value: string): string {
  return POSTGRES_URL.test(value) ? value.replace(/^([a-z]+:\/\/[^:@/?#]*:).*@/, "$1***@") : value;
}

/** A Deno KV path, or a PostgreSQL URL checked here so a typo stops start-up, not a request. */
export const DataSchema = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.check(
    (s) => !POSTGRES_URL.test(s) || URL.canParse(s),
    "must be a URL: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…]",
  ),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    const u = new URL(s);
    return u.hostname !== "" && u.username !== "" && u.pathname.length > 1 && u.hash === "";
  }, "must name a user, a host and a database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    const params = [...new URL(s).searchParams];
    return params.every(([name, value]) =>
      name === "sslmode" && ["disable", "require", "verify-full"].includes(value)
    );
  }, "takes one query parameter, sslmode=disable, require or verify-full"),
  v.check((s) => {
    if (!POSTGRES_URL.test(s)) return true;
    try {
      const u = new URL(s);
      decodeURIComponent(u.username + u.password + u.pathname);
      return true;
    } catch {
      return false;
    }
  }, "user, password and database must be percent-encoded"),
);
