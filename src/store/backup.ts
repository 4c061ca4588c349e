/**
 * Backups: the whole store as JSON lines. The first line is a header; each further line is one
 * record, `{"key":[…],"value":…,"expiresAt":"ISO-8601"|null}`, expiry absolute so that a
 * restore keeps each record's deadline. Values a store may hold that JSON cannot carry are
 * tagged objects with a single `$` key: `{"$bytes":"base64url"}`, `{"$bigint":"123"}`,
 * `{"$date":"ISO-8601"}`, `{"$number":"NaN"|"Infinity"|"-Infinity"}`; a plain object that
 * itself has a single key starting with `$` is written `{"$object":{…}}`.
 */
import * as v from "valibot";
import { describeIssue } from "../issue_words.ts";
import { base64url, fromBase64url } from "../secrets.ts";
import { nestsDeeperThan, recordProblem, STORE_LIMITS } from "./limits.ts";
import type { Key, Store, StoredRecord } from "./store.ts";
import { countOf } from "../count_words.ts";

/** The format of the lines, not the store's schema version (the header carries both). */
export const BACKUP_FORMAT = 1;

/** A backup that cannot be read, or a store it must not be loaded into. */
export class BackupError extends Error {
  override name = "BackupError";
}

export interface BackupHeader {
  readonly vestibule: "backup";
  readonly format: number;
  /** The store's schema version (its ["meta","schema"] record; null in an unversioned store). */
  readonly schema: number | null;
  readonly exportedAt: string;
  readonly records: number;
}

/** The store as lines (header first), all records as they were at one moment. */
export async function exportLines(
  store: Store,
  now: () => number,
  schema: number | null,
): Promise<string[]> {
  const records = await store.snapshot();
  const header: BackupHeader = {
    vestibule: "backup",
    format: BACKUP_FORMAT,
    schema,
    exportedAt: new Date(now()).toISOString(),
    records: records.length,
  };
  return [JSON.stringify(header), ...records.map(_encodeRecord)];
}

function _encodeRecord(record: Omit<StoredRecord, "version">): string {
  return JSON.stringify({
    key: record.key,
    value: encodeValue(record.value, record.key),
    expiresAt: record.expiresAt === null ? null : new Date(record.expiresAt).toISOString(),
  });
}

/** A store value as JSON-compatible data, with the tags above. */
export function encodeValue(value: unknown, key: Key): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    return Number.isFinite(value) ? value : { $number: String(value) };
  }
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (value instanceof Uint8Array) return { $bytes: base64url(value) };
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Array.isArray(value)) return value.map((item) => encodeValue(item, key));
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const encoded = Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, encodeValue(item, key)]),
    );
    return _isTagShaped(encoded) ? { $object: encoded } : encoded;
  }
  throw new BackupError(
    `the record ${JSON.stringify(key)} holds a ${_typeName(value)}, which a backup cannot carry`,
  );
}

/** The inverse of encodeValue; `where` names the line in an error. */
export function decodeValue(value: unknown, where: string): unknown {
  if (Array.isArray(value)) return value.map((item) => decodeValue(item, where));
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value);
  if (!_isTagShaped(value)) {
    return Object.fromEntries(entries.map(([name, item]) => [name, decodeValue(item, where)]));
  }
  const [tag, content] = entries[0]!;
  const bad = () => new BackupError(`${where}: malformed ${tag} value ${JSON.stringify(content)}`);
  switch (tag) {
    case "$object":
      if (content === null || typeof content !== "object" || Array.isArray(content)) throw bad();
      return Object.fromEntries(
        Object.entries(content).map(([name, item]) => [name, decodeValue(item, where)]),
      );
    case "$bytes":
      if (typeof content !== "string" || !/^[A-Za-z0-9_-]*$/.test(content)) throw bad();
      return fromBase64url(content);
    case "$bigint":
      if (typeof content !== "string" || !/^-?\d+$/.test(content)) throw bad();
      return BigInt(content);
    case "$date": {
      const time = typeof content === "string" ? Date.parse(content) : NaN;
      if (Number.isNaN(time)) throw bad();
      return new Date(time);
    }
    case "$number":
      if (content !== "NaN" && content !== "Infinity" && content !== "-Infinity") throw bad();
      return Number(content);
    default:
      throw new BackupError(`${where}: unknown tag ${JSON.stringify(tag)}`);
  }
}

function _isTagShaped(value: object): boolean {
  const names = Object.keys(value);
  return names.length === 1 && names[0]!.startsWith("$");
}

function _typeName(value: unknown): string {
  if (typeof value !== "object") return typeof value;
  return (value as object).constructor?.name ?? "object without prototype";
}

const IsoTime = v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 time"));

const HeaderSchema = v.object({
  vestibule: v.literal("backup", 'must be "backup" (is this a Vestibule backup?)'),
  format: v.literal(BACKUP_FORMAT, `must be ${BACKUP_FORMAT}`),
  schema: v.nullable(v.pipe(v.number(), v.integer("must be a whole number"))),
  exportedAt: IsoTime,
  records: v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(0)),
});

const RecordSchema = v.strictObject({
  key: v.pipe(
    v.array(v.union([v.string(), v.number()], "must be a string or a number")),
    v.minLength(1, "must not be empty"),
  ),
  value: v.unknown(),
  expiresAt: v.nullable(IsoTime),
});

export interface Backup {
  readonly header: BackupHeader;
  /** Versions belong to the store that wrote them, so a backup has none. */
  readonly records: Omit<StoredRecord, "version">[];
}

/**
 * Reads a whole backup, every line checked, before anything is written anywhere: its shape, and
 * that every store takes its record (limits.ts), so that an import writes all or nothing.
 */
export function parseBackup(text: string): Backup {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const parsedHeader = v.safeParse(HeaderSchema, _json(lines[0] ?? "", 1, "the header"));
  if (!parsedHeader.success) {
    throw new BackupError(`line 1 (the header): ${describeIssue(parsedHeader.issues[0])}`);
  }
  const header = parsedHeader.output as BackupHeader;
  const records = lines.slice(1).map((line, i) => {
    const where = `line ${i + 2}`;
    const parsed = v.safeParse(RecordSchema, _json(line, i + 2, "a record"));
    if (!parsed.success) throw new BackupError(`${where}: ${describeIssue(parsed.issues[0])}`);
    const { key, value, expiresAt } = parsed.output;
    // decodeValue recurses; each level of a value is at most two of its line (an $object tag).
    if (nestsDeeperThan(value, 2 * STORE_LIMITS.depth)) {
      throw new BackupError(
        `${where}: the value nests more than ${STORE_LIMITS.depth} levels deep, more than a store takes`,
      );
    }
    const decoded = decodeValue(value, where);
    const problem = recordProblem(key, decoded);
    if (problem !== null) throw new BackupError(`${where} (key ${_shortKey(key)}): ${problem}`);
    return { key, value: decoded, expiresAt: expiresAt === null ? null : Date.parse(expiresAt) };
  });
  if (records.length !== header.records) {
    throw new BackupError(
      `the header announces ${
        countOf(header.records, "record")
      } and the file holds ${records.length}: is it cut short?`,
    );
  }
  return { header, records };
}

/** A key for a message: its first parts, each cut short, so that a 3,000-byte key stays readable. */
function _shortKey(key: Key): string {
  const parts = key.slice(0, 4).map((part) =>
    typeof part === "string" && part.length > 40 ? `${part.slice(0, 40)}…` : part
  );
  return JSON.stringify(key.length > 4 ? [...parts, "…"] : parts);
}

function _json(line: string, number: number, what: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupError(`line ${number}: expected ${what} as one JSON object`);
  }
}

/**
 * Loads a backup into an empty store; refuses a store that holds anything. Records whose
 * expiry has passed are skipped. Returns how many were written.
 */
export async function importBackup(
  store: Store,
  backup: Backup,
  now: () => number,
): Promise<number> {
  for await (const _ of store.list([], { limit: 1 })) {
    throw new BackupError("the store is not empty: a backup is loaded only into an empty store");
  }
  let written = 0;
  for (const { key, value, expiresAt } of backup.records) {
    if (expiresAt !== null && expiresAt <= now()) continue;
    await store.set(key, value, expiresAt === null ? {} : { expireIn: expiresAt - now() });
    written++;
  }
  return written;
}
