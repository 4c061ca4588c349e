/**
 * Audit entries as OpenTelemetry log records, when tracing is on: the store, wrapped by app.ts,
 * emits each audit entry a commit (or a set) has stored, in the context of the request that
 * wrote it, so a SIEM fed by the collector gets the entry with its trace. Only what was stored is
 * emitted: a commit whose checks fail emits nothing.
 */
import type { Mutation, Store } from "../../store/store.ts";
import type { Tracing } from "../../tracing/tracing.ts";
import type { AuditEntry } from "./audit.ts";

/** The log record's event name; its attributes are the entry's fields. */
export const AUDIT_EVENT = "vestibule.audit";

export function withAuditExport(store: Store, tracing: Tracing): Store {
  const emit = (mutations: readonly Mutation[]) => {
    for (const mutation of mutations) {
      if (mutation.type !== "set" || mutation.key[0] !== "audit") continue;
      // A pack holds its entries newest first (audit.ts): emitted in the order they happened.
      const value = mutation.value as AuditEntry | readonly AuditEntry[];
      for (const entry of Array.isArray(value) ? value.toReversed() : [value]) {
        tracing.emit(auditRecord(entry));
      }
    }
  };
  return {
    get: (key) => store.get(key),
    list: (prefix, options) => store.list(prefix, options),
    delete: (key) => store.delete(key),
    snapshot: (prefix) => store.snapshot(prefix),
    close: () => store.close(),
    async set(key, value, options) {
      await store.set(key, value, options);
      emit([{ type: "set", key, value }]);
    },
    async commit(checks, mutations, options) {
      const committed = await store.commit(checks, mutations, options);
      if (committed) emit(mutations);
      return committed;
    },
  };
}

/**
 * An entry as a log record: its ids, actor and action, without the summary, which may quote a
 * gated call's arguments or a person's address (the whole entry is in `admin audit --json`,
 * on the operator's own pipe).
 */
export function auditRecord(entry: AuditEntry) {
  return {
    time: entry.at,
    eventName: AUDIT_EVENT,
    body: `${entry.actor} ${entry.action}`,
    attributes: {
      "vestibule.audit.id": entry.id,
      "vestibule.business.id": entry.businessId,
      "vestibule.account.id": entry.accountId ?? undefined,
      "vestibule.audit.actor": entry.actor,
      "oauth.client.id": entry.clientId ?? undefined,
      "vestibule.audit.action": entry.action,
      "vestibule.gate.id": entry.gateId ?? undefined,
    },
  };
}
