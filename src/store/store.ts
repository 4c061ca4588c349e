/**
 * The narrow storage interface every backend implements (Deno KV, SQLite, PostgreSQL).
 * Keys are tuples; values are JSON-compatible. Single-use records are consumed with
 * `commit`, whose checks make two concurrent uses impossible.
 */
export type KeyPart = string | number;
export type Key = readonly KeyPart[];

export interface Entry<T> {
  readonly key: Key;
  readonly value: T;
  /** Opaque; changes on every write of the key. */
  readonly version: string;
}

/** A record with its absolute expiry (epoch milliseconds), as a backup holds it. */
export interface StoredRecord {
  readonly key: Key;
  readonly value: unknown;
  readonly expiresAt: number | null;
  /** As in Entry: what a commit checks to change the record only if it is still this one. */
  readonly version: string;
}

export interface SetOptions {
  /** Milliseconds from now after which the record reads as absent. */
  readonly expireIn?: number;
}

export interface AtomicCheck {
  readonly key: Key;
  /** The version the key must still have; null: the key must be absent. */
  readonly version: string | null;
}

/** How `list` walks a prefix. */
export interface ListOptions {
  readonly limit?: number;
  /** Newest key first: the keys in descending order. */
  readonly reverse?: boolean;
  /**
   * Resume after this key (a full key under the prefix, usually the last one a previous listing
   * gave): only keys past it in the listing's direction, never the key itself.
   */
  readonly after?: Key;
}

/**
 * When a commit reaches the disk. `synced` (the default): before it returns. `deferred`: it is
 * stored and seen by every reader when it returns, and survives the process's crash like any
 * commit (the operating system holds it), but an operating system crash or a power cut may lose
 * it until it is synced, at most DEFERRED_SYNC_MS later, by SQLite (sqlite_store.ts). Deno KV and
 * PostgreSQL sync every commit, off the event loop, and take no notice of it. For records whose
 * loss in a power cut costs less than a disk sync per commit: upstream calls' audit entries.
 */
export type Durability = "synced" | "deferred";

export interface CommitOptions {
  readonly durability?: Durability;
}

export type Mutation =
  | { readonly type: "set"; readonly key: Key; readonly value: unknown; readonly expireIn?: number }
  | { readonly type: "delete"; readonly key: Key };

/**
 * The store stayed locked by another process (the admin CLI, a second server) through every
 * retry of an operation. A request that meets it is a 500; an admin command says so in one line.
 */
export class StoreBusyError extends Error {
  override name = "StoreBusyError";
}

/**
 * The database does not answer: unreachable, refusing the login, shutting down. A request that
 * meets it is a 503 with Retry-After (http/request_log.ts), never a 500: it is the operator's
 * outage, and the client should come back.
 */
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
}

export interface Store {
  get<T>(key: Key): Promise<Entry<T> | null>;
  set(key: Key, value: unknown, options?: SetOptions): Promise<void>;
  delete(key: Key): Promise<void>;
  /** All mutations happen, or none: none when any check fails. Returns whether they happened. */
  commit(
    checks: readonly AtomicCheck[],
    mutations: readonly Mutation[],
    options?: CommitOptions,
  ): Promise<boolean>;
  /** Entries under a prefix in key order (or reversed); expired ones are skipped. */
  list<T>(prefix: Key, options?: ListOptions): AsyncIterable<Entry<T>>;
  /**
   * Every live record under a prefix (the whole store by default) with its expiry, as they all
   * were at one moment (backup, migrations); throws StoreBusyError when writes under the prefix
   * never leave it a quiet moment.
   */
  snapshot(prefix?: Key): Promise<StoredRecord[]>;
  /** Ends the store's connections (PostgreSQL closes its pool asynchronously). */
  close(): Promise<void>;
}
