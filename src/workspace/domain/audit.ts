/**
 * The audit log: every tool call that changes anything, every human decision or revocation and
 * every operator command, per business, newest first. Entries are appended in the same commit as the change they
 * describe when there is one, so the log cannot miss an applied change.
 */
import * as v from "valibot";
import type { Durability, KeyPart, Mutation, Store } from "../../store/store.ts";

export const AuditEntrySchema = v.object({
  id: v.string(),
  at: v.number(),
  businessId: v.string(),
  /**
   * The account on whose behalf it happened: the token's subject, the deciding human, or the
   * account an operator's command changed; null for what the business's systems reported
   * through the operator API, which acts for no account.
   */
  accountId: v.nullable(v.string()),
  /**
   * `agent` for tool calls, `human` for decisions on the approval page and revocations on
   * /account, `operator` for `vestibule admin` commands and the operator API.
   */
  actor: v.picklist(["agent", "human", "operator"]),
  /** The OAuth client that made the call; for a decision, the client that asked for it. */
  clientId: v.nullable(v.string()),
  /**
   * The tool name, `approve` / `decline`, `revoke_grant`, the admin command, or the operator
   * API's operationId (`updateWorkflowRun`).
   */
  action: v.string(),
  summary: v.string(),
  gateId: v.nullable(v.string()),
});
export type AuditEntry = v.InferOutput<typeof AuditEntrySchema>;

export type NewAuditEntry = Omit<AuditEntry, "id" | "at">;

/**
 * An entry by the operator: an admin command, for the account it changed, or the business's
 * systems through the operator API, for none (and for the gate a run was approved by, if any).
 */
export function operatorEntry(
  businessId: string,
  accountId: string | null,
  action: string,
  summary: string,
  gateId: string | null = null,
): NewAuditEntry {
  return { businessId, accountId, actor: "operator", clientId: null, action, summary, gateId };
}

/** Entries in one group commit: well within what one commit may hold (src/store/limits.ts). */
const GROUP_COMMIT_MAX = 64;

/**
 * A pack's bound, half of what one value may hold in every store (limits.ts), against an entry's
 * size estimated from above (`_packBytes`) rather than measured: measuring costs what packing saves.
 */
const PACK_BYTES = 32_768;

/** Far enough in the future that the inverted time stays positive; orders newest first. */
const LATEST = 9_999_999_999_999;

/**
 * Where an entry lies in its business's log, newest first: its key after the business's prefix,
 * and for an entry in a pack, its place in the pack after the pack's key. Positions only order
 * entries of one business; a made-up one is a place in that log, no more.
 */
export type AuditPosition = readonly KeyPart[];

/**
 * What an audit key holds: one entry, or a pack of them newest first. Upstream calls' entries
 * (deferred) of one business stamped one after another in the same millisecond are stored as one
 * pack under its newest entry's key: each entry written costs the store more than its bytes (Deno
 * KV's writer thread, about 17 µs an entry), and no other key can fall between a pack's entries,
 * so packed or not the log reads in the same order (docs/gateway.md "Audit durability").
 */
type Stored = AuditEntry | readonly AuditEntry[];

/** The place of a moment: going older from it, the first entries are those of that millisecond. */
export function auditPositionAt(ms: number): AuditPosition {
  return [LATEST - ms];
}

/** An entry the store did not take, and its error. */
export interface RefusedEntry {
  readonly entry: NewAuditEntry;
  readonly error: unknown;
}

export interface PositionedEntry {
  readonly entry: AuditEntry;
  readonly position: AuditPosition;
}

export interface AuditLog {
  /** The mutation that appends the entry, for callers that commit it with their change. */
  entry(entry: NewAuditEntry): Mutation;
  /**
   * Stores the entry in a commit of its own, or shared with entries appended meanwhile; that
   * commit is deferred (store.ts Durability) only when every entry in it may be.
   */
  append(entry: NewAuditEntry, durability?: Durability): Promise<void>;
  /**
   * Stores the entries as `append` would each; resolves once every one is stored or refused,
   * with those refused and why (none when all are stored). Never rejects.
   */
  appendAll(
    entries: readonly NewAuditEntry[],
    durability?: Durability,
  ): Promise<readonly RefusedEntry[]>;
  list(businessId: string, options?: { readonly limit?: number }): Promise<AuditEntry[]>;
  /**
   * A business's entries from newest to oldest (oldest to newest with `newer`), each with its
   * position, starting past `after`; the caller stops reading when it has enough.
   */
  scan(
    businessId: string,
    options?: { readonly after?: AuditPosition; readonly newer?: boolean },
  ): AsyncIterable<PositionedEntry>;
}

/**
 * Orders entries of the same millisecond newest first too; one counter for the process, as an
 * admin command may append through more than one log.
 */
let sequence = 0;

export function createAuditLog(store: Store, now: () => number): AuditLog {
  const stamp = (fields: NewAuditEntry): Stamped => {
    const at = now();
    const record: AuditEntry = { id: crypto.randomUUID(), at, ...fields };
    sequence = (sequence + 1) % LATEST;
    return {
      record,
      sequence,
      key: ["audit", fields.businessId, LATEST - at, LATEST - sequence, record.id],
    };
  };
  // Group commit: appends made in the same turn (a batch of upstream calls' entries handed over
  // together) or while a commit is under way go together in the next one, so concurrent calls
  // share a commit, and each append still resolves only once its entry is stored.
  let waiting: Waiting[] = [];
  let writing = false;
  const write = async () => {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, GROUP_COMMIT_MAX);
      waiting = waiting.slice(batch.length);
      try {
        const durability = batch.every((item) => item.durability === "deferred")
          ? "deferred"
          : "synced";
        await store.commit([], _packed(batch), { durability });
        for (const item of batch) item.settle(item, true);
      } catch (error) {
        for (const item of batch) item.settle(item, false, error);
      }
    }
    writing = false;
  };
  const appendAll = (
    all: readonly NewAuditEntry[],
    durability: Durability = "synced",
  ): Promise<readonly RefusedEntry[]> =>
    // One promise for all of them, settled by the last: nothing per entry but the entry.
    new Promise((resolve) => {
      const refused: RefusedEntry[] = [];
      let left = all.length;
      if (left === 0) return resolve(refused);
      const settle = (item: Waiting, stored: boolean, error?: unknown) => {
        if (!stored) refused.push({ entry: item.fields, error });
        if (--left === 0) resolve(refused);
      };
      for (const fields of all) waiting.push({ ...stamp(fields), fields, durability, settle });
      if (!writing) {
        writing = true;
        queueMicrotask(write);
      }
    });
  return {
    entry(fields) {
      const { key, record } = stamp(fields);
      return { type: "set", key, value: record };
    },
    async append(fields, durability = "synced") {
      const [refused] = await appendAll([fields], durability);
      if (refused !== undefined) throw refused.error;
    },
    appendAll,
    async list(businessId, options = {}) {
      const entries: AuditEntry[] = [];
      const limit = options.limit ?? 100;
      // Each key holds at least one entry: `limit` keys are always enough.
      for await (const stored of store.list<Stored>(["audit", businessId], { limit })) {
        for (const entry of Array.isArray(stored.value) ? stored.value : [stored.value]) {
          if (entries.length === limit) return entries;
          entries.push(entry);
        }
      }
      return entries;
    },
    async *scan(businessId, options = {}) {
      const prefix = ["audit", businessId];
      const { after, newer = false } = options;
      // Past an entry in a pack: first the rest of that pack. Its key sorts before the position
      // (a key before its extensions), so going older the listing below starts past the pack,
      // and going newer it starts with the pack, which is skipped there. Going older from a
      // pack's own key (a made-up position), all of the pack lies past it.
      const packKey = after?.length === 4 ? [...prefix, ...after.slice(0, 3)] : null;
      const from = packKey ?? (after?.length === 3 && !newer ? [...prefix, ...after] : null);
      if (from !== null) {
        const pack = await store.get<Stored>(from);
        if (pack !== null && Array.isArray(pack.value)) {
          yield* _unpack(pack.value, after!.slice(0, 3), newer, packKey ? Number(after![3]) : -1);
        }
      }
      for await (
        const stored of store.list<Stored>(prefix, {
          reverse: newer,
          ...(after === undefined ? {} : { after: [...prefix, ...after] }),
        })
      ) {
        const position = stored.key.slice(prefix.length);
        if (!Array.isArray(stored.value)) {
          yield { entry: stored.value as AuditEntry, position };
        } else if (packKey === null || !_sameKey(stored.key, packKey)) {
          yield* _unpack(stored.value, position, newer);
        }
      }
    },
  };
}

interface Stamped {
  readonly record: AuditEntry;
  readonly sequence: number;
  readonly key: readonly KeyPart[];
}

interface Packable extends Stamped {
  readonly durability: Durability;
}

interface Waiting extends Packable {
  readonly fields: NewAuditEntry;
  /** Told once the entry's commit is made or failed (shared by the entries appended together). */
  readonly settle: (item: Waiting, stored: boolean, error?: unknown) => void;
}

/**
 * The batch's writes: runs of deferred entries of one business stamped one after another in the
 * same millisecond (consecutive sequences: nothing else was stamped between them) become one pack,
 * newest first under the newest's key; every other entry is a key of its own.
 */
export function _packed(batch: readonly Packable[]): Mutation[] {
  const mutations: Mutation[] = [];
  let run: Packable[] = [];
  let bytes = 0;
  const close = () => {
    const newest = run.at(-1);
    if (newest !== undefined) {
      const value = run.length === 1 ? newest.record : run.map((item) => item.record).reverse();
      mutations.push({ type: "set", key: newest.key, value });
    }
    run = [];
    bytes = 0;
  };
  for (const item of batch) {
    const last = run.at(-1);
    const size = _packBytes(item.record);
    const joins = last !== undefined && item.durability === "deferred" &&
      last.durability === "deferred" && item.record.businessId === last.record.businessId &&
      item.record.at === last.record.at && item.sequence === last.sequence + 1 &&
      bytes + size <= PACK_BYTES;
    if (!joins) close();
    run.push(item);
    bytes += size;
  }
  close();
  return mutations;
}

/** An entry's size in a stored value, from above: two bytes a character and room for the names. */
function _packBytes(entry: AuditEntry): number {
  let characters = 0;
  for (const value of Object.values(entry)) {
    if (typeof value === "string") characters += value.length;
  }
  return 2 * characters + 256;
}

function _sameKey(a: readonly KeyPart[], b: readonly KeyPart[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

/** A pack's entries with their positions, from `from` (exclusive) towards older or newer ones. */
function* _unpack(
  pack: readonly AuditEntry[],
  key: readonly KeyPart[],
  newer: boolean,
  from = newer ? pack.length : -1,
): Generator<PositionedEntry> {
  if (newer) {
    for (let i = Math.min(from, pack.length) - 1; i >= 0; i--) {
      yield { entry: pack[i]!, position: [...key, i] };
    }
  } else {
    for (let i = Math.max(from, -1) + 1; i < pack.length; i++) {
      yield { entry: pack[i]!, position: [...key, i] };
    }
  }
}
