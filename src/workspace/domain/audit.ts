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

/** Far enough in the future that the inverted time stays positive; orders newest first. */
const LATEST = 9_999_999_999_999;

/**
 * Where an entry lies in its business's log, newest first: its key after the business's prefix.
 * Positions only order entries of one business; a made-up one is a place in that log, no more.
 */
export type AuditPosition = readonly KeyPart[];

/** The place of a moment: going older from it, the first entries are those of that millisecond. */
export function auditPositionAt(ms: number): AuditPosition {
  return [LATEST - ms];
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
  const entry = (fields: NewAuditEntry): Mutation => {
    const at = now();
    const record: AuditEntry = { id: crypto.randomUUID(), at, ...fields };
    sequence = (sequence + 1) % LATEST;
    return {
      type: "set",
      key: ["audit", fields.businessId, LATEST - at, LATEST - sequence, record.id],
      value: record,
    };
  };
  // Group commit: appends made in the same turn (a batch of upstream calls' entries handed over
  // together) or while a commit is under way go together in the next one, so concurrent calls
  // share a commit, and each append still resolves only once its entry is stored.
  let waiting: {
    mutation: Mutation;
    durability: Durability;
    done: (error?: unknown) => void;
  }[] = [];
  let writing = false;
  const write = async () => {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, GROUP_COMMIT_MAX);
      waiting = waiting.slice(batch.length);
      try {
        const durability = batch.every((item) => item.durability === "deferred")
          ? "deferred"
          : "synced";
        await store.commit([], batch.map((item) => item.mutation), { durability });
        for (const item of batch) item.done();
      } catch (error) {
        for (const item of batch) item.done(error);
      }
    }
    writing = false;
  };
  return {
    entry,
    append(fields, durability = "synced") {
      return new Promise<void>((resolve, reject) => {
        const mutation = entry(fields);
        waiting.push({
          mutation,
          durability,
          done: (error) => error === undefined ? resolve() : reject(error),
        });
        if (!writing) {
          writing = true;
          queueMicrotask(write);
        }
      });
    },
    async list(businessId, options = {}) {
      const entries: AuditEntry[] = [];
      const limit = options.limit ?? 100;
      for await (const stored of store.list<AuditEntry>(["audit", businessId], { limit })) {
        entries.push(stored.value);
      }
      return entries;
    },
    async *scan(businessId, options = {}) {
      const prefix = ["audit", businessId];
      const { after, newer = false } = options;
      for await (
        const stored of store.list<AuditEntry>(prefix, {
          reverse: newer,
          ...(after === undefined ? {} : { after: [...prefix, ...after] }),
        })
      ) {
        yield { entry: stored.value, position: stored.key.slice(prefix.length) };
      }
    },
  };
}
