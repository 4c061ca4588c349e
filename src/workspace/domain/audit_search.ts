/**
 * One page of a business's audit log for its owners' audit page: filtered by agent, person,
 * action and UTC days, newest first, continued by an opaque cursor in either direction. Every
 * request reads a bounded number of entries, however rare the matches.
 */
import * as v from "valibot";
import {
  type AuditEntry,
  type AuditLog,
  type AuditPosition,
  auditPositionAt,
  type PositionedEntry,
} from "./audit.ts";

export const AUDIT_PAGE_SIZE = 50;

/** Entries one request reads at most while filtering; the page then offers to read on. */
export const AUDIT_SCAN_LIMIT = 2_000;

/** Newest entries whose agents, people and actions the filter form offers. */
export const AUDIT_FACET_ENTRIES = 1_000;

const DAY_MS = 86_400_000;

export interface AuditFilter {
  readonly clientId?: string;
  readonly accountId?: string;
  readonly action?: string;
  /** The first millisecond shown (a UTC day's start). */
  readonly fromMs?: number;
  /** The first millisecond not shown (the start of the UTC day after the last). */
  readonly untilMs?: number;
}

/** Where a page starts: past a position, towards older entries or newer ones. */
export interface AuditCursor {
  readonly direction: "older" | "newer";
  readonly position: AuditPosition;
}

export interface AuditPage {
  /** Newest first. */
  readonly entries: readonly PositionedEntry[];
  /** Where the next older page starts; null when nothing older can match. */
  readonly older: AuditPosition | null;
  /** Where the next newer page starts; null on the newest page. */
  readonly newer: AuditPosition | null;
  /** The page stopped at the scan limit before it was full: `older`/`newer` read on. */
  readonly stoppedEarly: boolean;
}

export interface SearchLimits {
  readonly pageSize: number;
  readonly scanLimit: number;
}

export function matchesAudit(entry: AuditEntry, filter: AuditFilter): boolean {
  return (filter.clientId === undefined || entry.clientId === filter.clientId) &&
    (filter.accountId === undefined || entry.accountId === filter.accountId) &&
    (filter.action === undefined || entry.action === filter.action) &&
    (filter.fromMs === undefined || entry.at >= filter.fromMs) &&
    (filter.untilMs === undefined || entry.at < filter.untilMs);
}

/** Reads past `after` in one direction until `want` matches, the dates' end or the limit. */
async function _collect(
  audit: Pick<AuditLog, "scan">,
  businessId: string,
  filter: AuditFilter,
  direction: AuditCursor["direction"],
  after: AuditPosition | undefined,
  want: number,
  scanLimit: number,
) {
  const found: PositionedEntry[] = [];
  let scanned = 0;
  let last: AuditPosition | null = null;
  const newer = direction === "newer";
  const scan = audit.scan(businessId, { newer, ...(after === undefined ? {} : { after }) });
  for await (const item of scan) {
    const { at } = item.entry;
    // Entries are ordered by time: past the dates' far end nothing more can match.
    const bound = newer ? filter.untilMs : filter.fromMs;
    if (bound !== undefined && (newer ? at >= bound : at < bound)) break;
    scanned++;
    last = item.position;
    if (matchesAudit(item.entry, filter)) {
      found.push(item);
      if (found.length === want) return { found, ended: "full" as const, last };
    }
    if (scanned >= scanLimit) return { found, ended: "limit" as const, last };
  }
  return { found, ended: "end" as const, last };
}

/**
 * The page past `cursor` (the newest page without one). A newer page that reaches the newest
 * entry is the newest page itself, so it is always full when the log allows.
 */
export async function searchAudit(
  audit: Pick<AuditLog, "scan">,
  businessId: string,
  filter: AuditFilter,
  cursor: AuditCursor | null,
  limits: SearchLimits = { pageSize: AUDIT_PAGE_SIZE, scanLimit: AUDIT_SCAN_LIMIT },
): Promise<AuditPage> {
  const { pageSize, scanLimit } = limits;
  if (cursor?.direction === "newer") {
    const { found, ended, last } = await _collect(
      audit,
      businessId,
      filter,
      "newer",
      cursor.position,
      pageSize + 1,
      scanLimit,
    );
    if (ended === "end") return await searchAudit(audit, businessId, filter, null, limits);
    const shown = found.slice(0, pageSize);
    return {
      entries: shown.toReversed(),
      newer: ended === "full" ? shown.at(-1)!.position : last,
      older: shown[0]?.position ?? cursor.position,
      stoppedEarly: ended === "limit",
    };
  }
  // The newest page of a date range starts at its last day's end, not at the newest entry.
  const start = cursor?.position ??
    (filter.untilMs === undefined ? undefined : auditPositionAt(filter.untilMs));
  const { found, ended, last } = await _collect(
    audit,
    businessId,
    filter,
    "older",
    start,
    pageSize + 1,
    scanLimit,
  );
  const shown = found.slice(0, pageSize);
  return {
    entries: shown,
    older: ended === "full" ? shown.at(-1)!.position : ended === "limit" ? last : null,
    newer: cursor === null ? null : shown[0]?.position ?? cursor.position,
    stoppedEarly: ended === "limit",
  };
}

/** The agents, people and actions among the newest entries: what the filter form offers. */
export async function auditFacets(
  audit: Pick<AuditLog, "scan">,
  businessId: string,
  entries = AUDIT_FACET_ENTRIES,
  /** Only this account's entries (a member's page); null: everyone's. */
  accountId: string | null = null,
): Promise<{ clientIds: string[]; accountIds: string[]; actions: string[] }> {
  const clientIds = new Set<string>();
  const accountIds = new Set<string>();
  const actions = new Set<string>();
  let read = 0;
  for await (const { entry } of audit.scan(businessId)) {
    if (accountId !== null && entry.accountId !== accountId) {
      if (++read >= entries) break;
      continue;
    }
    if (entry.clientId !== null) clientIds.add(entry.clientId);
    if (entry.accountId !== null) accountIds.add(entry.accountId);
    actions.add(entry.action);
    if (++read >= entries) break;
  }
  return {
    clientIds: [...clientIds],
    accountIds: [...accountIds],
    actions: [...actions].sort(),
  };
}

// A cursor is a position, base64url-encoded JSON: opaque to people, checked on the way back in.
const PositionSchema = v.union([
  v.strictTuple([v.number(), v.number(), v.string()]),
  // An entry in a pack (audit.ts): the pack's key and the entry's place in it.
  v.strictTuple([
    v.number(),
    v.number(),
    v.string(),
    v.pipe(v.number(), v.integer(), v.minValue(0)),
  ]),
]);

export function encodeAuditCursor(position: AuditPosition): string {
  return btoa(JSON.stringify(position)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The position a cursor names, or null for anything this page did not write. */
export function decodeAuditCursor(cursor: string): AuditPosition | null {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  try {
    const json = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
    const parsed = v.safeParse(PositionSchema, json);
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

/** A `<input type="date">` value as the UTC day's first millisecond, or null. */
export function utcDayStart(value: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over into March: a day that does not exist is refused.
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 &&
      back.getUTCDate() === day
    ? ms
    : null;
}

/** The first millisecond after a UTC day. */
export function afterUtcDay(dayStart: number): number {
  return dayStart + DAY_MS;
}
