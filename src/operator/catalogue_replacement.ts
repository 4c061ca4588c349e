// Replacing a business's whole catalogue (workflows, triggers, packs, billing) with what its
// systems sent: planned as one commit that checks and bumps the catalogue mark, with steps
// before it when the old records to delete would not fit in it.
import { countOf } from "../count_words.ts";
import { STORE_LIMITS } from "../store/limits.ts";
import type { AtomicCheck, Mutation } from "../store/store.ts";
import { type AuditLog, operatorEntry } from "../workspace/domain/audit.ts";
import type { Workspace } from "../workspace/domain/workspace.ts";
import type { Catalogue, CatalogueInput, Outcome } from "./operator_bodies.ts";
import type { Planned } from "./planned_commits.ts";

export interface CatalogueDeps {
  readonly now: () => number;
  readonly workspace: Workspace;
  readonly audit: AuditLog;
}

/**
 * Replaces the catalogue in one commit that checks and bumps the catalogue mark. When the old
 * records to delete would not fit in it (a catalogue grown past the caps), steps before it
 * delete them, triggers first so that none outlives its workflow, each step checking and bumping
 * the mark too; the last commit then writes the whole new catalogue at once.
 */
export async function planCatalogue(
  { now, workspace, audit }: CatalogueDeps,
  businessId: string,
  input: CatalogueInput,
): Promise<Outcome<Planned<Catalogue>>> {
  const mark = await workspace.catalogue.get(businessId);
  const at = now();
  const checks: AtomicCheck[] = [{
    key: workspace.catalogue.key(businessId),
    version: mark?.version ?? null,
  }];
  const bump: Mutation = {
    type: "set",
    key: workspace.catalogue.key(businessId),
    value: { replacedAt: at },
  };
  const catalogue: Catalogue = {
    workflows: input.workflows.map((w) => ({ ...w, updatedAt: at })),
    triggers: input.triggers.map((t) => ({ ...t, updatedAt: at })),
    packs: input.packs.map((p) => ({ ...p, updatedAt: at })),
    billing: {
      subscription: { ...input.billing.subscription, updatedAt: at },
      invoices: input.billing.invoices.map((i) => ({ ...i, updatedAt: at })),
    },
  };
  const collections = [
    [workspace.triggers, catalogue.triggers],
    [workspace.invoices, catalogue.billing.invoices],
    [workspace.packs, catalogue.packs],
    [workspace.workflows, catalogue.workflows],
  ] as const;
  const deletes: Mutation[] = [];
  const sets: Mutation[] = [];
  for (const [collection, records] of collections) {
    const kept = new Set(records.map((r) => r.id));
    for (const old of await collection.list(businessId)) {
      if (!kept.has(old.id)) {
        deletes.push({ type: "delete", key: collection.key(businessId, old.id) });
      }
    }
    for (const record of records) {
      sets.push({ type: "set", key: collection.key(businessId, record.id), value: record });
    }
  }
  sets.push({
    type: "set",
    key: workspace.subscription.key(businessId),
    value: catalogue.billing.subscription,
  });
  // The new records, the mark and the audit entry; what is left of a commit deletes.
  const room = STORE_LIMITS.commitWrites - sets.length - 2;
  if (deletes.length > room) {
    const step = deletes.slice(0, STORE_LIMITS.commitWrites - 2);
    const entry = audit.entry(operatorEntry(
      businessId,
      null,
      "replaceCatalogue",
      `Removed ${
        countOf(step.length, "record")
      } no longer listed, a step before replacing the catalogue`,
      null,
    ));
    return { ok: true, value: { step: { checks, mutations: [...step, bump, entry] } } };
  }
  const removed = deletes.length;
  const counts = `${countOf(catalogue.workflows.length, "workflow")}, ` +
    `${countOf(catalogue.triggers.length, "trigger")}, ` +
    `${countOf(catalogue.packs.length, "pack")}, ` +
    `${countOf(catalogue.billing.invoices.length, "invoice")}, ` +
    `plan ${catalogue.billing.subscription.plan}`;
  const entry = audit.entry(operatorEntry(
    businessId,
    null,
    "replaceCatalogue",
    `Replaced the catalogue: ${counts}` +
      (removed === 0 ? "" : ` (${countOf(removed, "record")} no longer listed removed)`),
    null,
  ));
  return {
    ok: true,
    value: { value: catalogue, checks, mutations: [...deletes, ...sets, bump, entry] },
  };
}

/** What the schema cannot see: ids repeated in a list, and triggers of unknown workflows. */
export function catalogueProblem(input: CatalogueInput): string | null {
  const lists = [
    ["workflows", input.workflows],
    ["triggers", input.triggers],
    ["packs", input.packs],
    ["billing.invoices", input.billing.invoices],
  ] as const;
  for (const [name, records] of lists) {
    const seen = new Set<string>();
    for (const [i, record] of records.entries()) {
      if (seen.has(record.id)) return `"${name}.${i}.id": "${record.id}" is listed twice`;
      seen.add(record.id);
    }
  }
  const workflows = new Set(input.workflows.map((w) => w.id));
  for (const [i, trigger] of input.triggers.entries()) {
    if (!workflows.has(trigger.workflowId)) {
      return `"triggers.${i}.workflowId": "${trigger.workflowId}" is no workflow of this catalogue`;
    }
  }
  return null;
}
