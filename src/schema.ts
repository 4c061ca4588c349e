/**
 * The store's schema version, kept in ["meta","schema"], and the migrations that bring an older
 * store up to it at start-up. A migration is idempotent: run twice (a crash between its writes
 * and the version stamp), it changes nothing the second time.
 */
import { indexUnfinished } from "./outbox/outbox.ts";
import { base64url } from "./secrets.ts";
import type { Store } from "./store/store.ts";
import { StartupError } from "./startup_error.ts";

export const SCHEMA_KEY = ["meta", "schema"] as const;

interface SchemaRecord {
  readonly version: number;
}

export interface Migration {
  /** The version the store has after it. */
  readonly to: number;
  /** What it changes, for the start-up log and the CHANGELOG. */
  readonly summary: string;
  run(store: Store, now: () => number): Promise<void>;
}

/** Lowercase hex SHA-256, the storage key of sessions and links before version 2. */
const HEX_DIGEST = /^[0-9a-f]{64}$/;

/**
 * Sessions and e-mail links were stored under hex SHA-256 of their secret until commit 766e93d,
 * and under base64url of the same digest since; stores written before it lost every session and
 * pending link on upgrade. The digest is the same bytes, so the records are re-keyed as they are,
 * each keeping its expiry.
 */
async function _rekeyHexDigests(store: Store, now: () => number): Promise<void> {
  const records = [
    ...await store.snapshot(["accounts", "session"]),
    ...await store.snapshot(["accounts", "email_link"]),
  ];
  for (const record of records) {
    const [scope, kind, digest] = record.key;
    if (record.key.length !== 3 || typeof digest !== "string" || !HEX_DIGEST.test(digest)) {
      continue;
    }
    const bytes = Uint8Array.from(digest.match(/../g)!, (pair) => parseInt(pair, 16));
    const newKey = [scope!, kind!, base64url(bytes)];
    const expireIn = record.expiresAt === null ? undefined : record.expiresAt - now();
    if (expireIn !== undefined && expireIn <= 0) {
      await store.delete(record.key);
      continue;
    }
    // Only if it is still the record read (an old process may have ended the session meanwhile).
    const unchanged = { key: record.key, version: record.version };
    await store.commit([unchanged, { key: newKey, version: null }], [
      { type: "delete", key: record.key },
      {
        type: "set",
        key: newKey,
        value: record.value,
        ...(expireIn === undefined ? {} : { expireIn }),
      },
    ]);
  }
}

/**
 * Pending approvals get a mark, `["gate_pending", id]` -> business id, which workspace/gates.ts
 * now writes with each gate and deletes in the commit that decides it, so the metrics count what
 * waits without reading every gate ever made. Gates are `["gate", id]`, as gate_record.ts keys them.
 */
async function _markPendingGates(store: Store): Promise<void> {
  for (const record of await store.snapshot(["gate"])) {
    const [, id] = record.key;
    const gate = record.value as { readonly status?: unknown; readonly businessId?: unknown };
    if (record.key.length !== 2 || id === undefined || gate.status !== "pending") continue;
    // Only while it is still the gate read: one decided meanwhile stays unmarked.
    await store.commit([{ key: record.key, version: record.version }], [
      { type: "set", key: ["gate_pending", id], value: gate.businessId },
    ]);
  }
}

/** The workspace records that gained `updatedAt` in version 4, by their kind in the key. */
const _UPDATED_KINDS = new Set(["workflow", "run", "trigger", "pack", "subscription", "invoice"]);

/**
 * Version 4 (the operator API): the records the business's systems keep true carry `updatedAt`,
 * and runs carry what those systems report, `result` and `costCents` (null until reported).
 * When a record was last written is not known before this version: a run takes its end (or
 * start), an invoice its issue date, anything else the time of the upgrade, the latest it can be.
 */
async function _addUpdatedAt(store: Store, now: () => number): Promise<void> {
  for (const record of await store.snapshot(["ws"])) {
    const kind = record.key[2];
    const value = record.value as Record<string, unknown>;
    if (typeof kind !== "string" || !_UPDATED_KINDS.has(kind) || "updatedAt" in value) continue;
    const when = kind === "run"
      ? (value.finishedAt ?? value.startedAt)
      : kind === "invoice"
      ? value.issuedAt
      : now();
    const updated = {
      ...value,
      ...(kind === "run" ? { result: null, costCents: null } : {}),
      updatedAt: typeof when === "number" ? when : now(),
    };
    const expireIn = record.expiresAt === null ? undefined : record.expiresAt - now();
    if (expireIn !== undefined && expireIn <= 0) continue;
    // Only if it is still the record read: a record a running server wrote meanwhile has it.
    await store.commit([{ key: record.key, version: record.version }], [{
      type: "set",
      key: record.key,
      value: updated,
      ...(expireIn === undefined ? {} : { expireIn }),
    }]);
  }
}

/** Every migration, in order; the last one's `to` is the current version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    to: 2,
    summary: "sessions and sign-in links keyed by base64url instead of hex SHA-256",
    run: _rekeyHexDigests,
  },
  {
    to: 3,
    summary: "pending approvals marked under gate_pending (counted by the metrics)",
    run: _markPendingGates,
  },
  {
    to: 4,
    summary:
      "workflows, runs, triggers, packs, subscriptions and invoices carry updatedAt; runs result and costCents",
    run: _addUpdatedAt,
  },
  {
    to: 5,
    summary:
      "unfinished outbox deliveries indexed by due time (the sender reads only what may go); those with a link are kept until reported, not expired by the store",
    run: indexUnfinished,
  },
];

export const CURRENT_SCHEMA = MIGRATIONS.at(-1)!.to;

/** A store this release cannot use (written by a newer one). */
export class SchemaError extends StartupError {
  override name = "SchemaError";
}

/** The store's version; null when it has none (empty, or written before versions existed). */
export async function readSchemaVersion(store: Store): Promise<number | null> {
  return (await store.get<SchemaRecord>(SCHEMA_KEY))?.value.version ?? null;
}

function _newerStore(version: number, current: number): SchemaError {
  return new SchemaError(
    `the store is at schema version ${version}, newer than this release knows (${current}): run the release that wrote it, or restore a backup made for this one`,
  );
}

/** Throws SchemaError for a store written by a newer release; changes nothing (admin commands). */
export async function refuseNewerSchema(store: Store): Promise<void> {
  const version = await readSchemaVersion(store);
  if (version !== null && version > CURRENT_SCHEMA) throw _newerStore(version, CURRENT_SCHEMA);
}

/**
 * Brings the store to CURRENT_SCHEMA: stamps an empty one, migrates an older one (a store with
 * records and no version is version 1), refuses a newer one. Returns the migrations applied.
 */
export async function prepareSchema(
  store: Store,
  now: () => number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<Migration[]> {
  const current = migrations.at(-1)!.to;
  const stamped = await readSchemaVersion(store);
  let version = stamped;
  if (version === null) {
    let empty = true;
    for await (const _ of store.list([], { limit: 1 })) empty = false;
    version = empty ? current : 1;
  }
  if (version > current) throw _newerStore(version, current);
  const applied = migrations.filter((m) => m.to > version!);
  for (const migration of applied) {
    await migration.run(store, now);
    await store.set(SCHEMA_KEY, { version: migration.to } satisfies SchemaRecord);
  }
  if (stamped === null && applied.length === 0) {
    await store.set(SCHEMA_KEY, { version } satisfies SchemaRecord);
  }
  return applied;
}
