/**
 * What the business's own systems report through the operator API (issue 11, "status and
 * records in"): a run's status, result and cost, a connection's state, and the whole catalogue
 * of workflows, triggers, packs and billing records. The bodies are parsed by the schemas here
 * (the records of records.ts without what the server keeps itself), every change is one store
 * commit with its audit entry (actor `operator`), and what the agents read is then what those
 * systems said, stamped `updatedAt`.
 */
import * as v from "valibot";
import type { Accounts } from "../accounts/model.ts";
import { oneLine } from "../accounts/schemas.ts";
import { STORE_LIMITS } from "../store/limits.ts";
import type { AtomicCheck, Mutation, Store } from "../store/store.ts";
import { type AuditLog, operatorEntry } from "../workspace/domain/audit.ts";
import {
  type Connection,
  type Invoice,
  money,
  type Pack,
  PLANS,
  type Run,
  type Subscription,
  type Trigger,
  type Workflow,
} from "../workspace/domain/records.ts";
import type { Workspace } from "../workspace/domain/workspace.ts";
import { countOf } from "../count_words.ts";

/**
 * An identifier of the business's systems, as a URL path segment carries it as it is. Short and
 * ASCII, since each is part of a store key, and one commit takes at most 80 KiB of keys.
 */
export const OperatorIdSchema = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(64, "must be at most 64 characters"),
  v.regex(/^[A-Za-z0-9._:~-]+$/, "must be letters, digits and . _ : ~ - only"),
);
const Name = (max: number) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.minLength(1, "must not be empty"),
    v.maxLength(max, `must be at most ${max} characters`),
    // Names reach the approval mails (a workflow's, a connection's label): one line each.
    oneLine(),
  );
const Text = (max: number) =>
  v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`));
const Count = v.pipe(
  v.number(),
  v.safeInteger("must be a whole number"),
  v.minValue(0, "must be 0 or more"),
);
const Cents = v.pipe(Count, v.description("An amount in cents."));
const Time = v.pipe(
  Count,
  v.maxValue(8_640_000_000_000_000, "must be a time in milliseconds since the epoch"),
  v.description("Milliseconds since the epoch."),
);

/** The largest run result kept, in characters. */
export const MAX_RESULT_LENGTH = 4096;

export const RunUpdateSchema = v.strictObject({
  status: v.pipe(
    v.picklist(["running", "succeeded", "failed"], "must be running, succeeded or failed"),
    v.description("`succeeded` and `failed` are final: a finished run does not change again."),
  ),
  result: v.optional(
    v.pipe(
      Text(MAX_RESULT_LENGTH),
      v.description("What the run did or why it failed, in plain words; kept as it is."),
    ),
  ),
  costCents: v.optional(v.pipe(Cents, v.description("What the run cost, in cents."))),
});
export type RunUpdate = v.InferOutput<typeof RunUpdateSchema>;

export const ConnectionUpdateSchema = v.strictObject({
  status: v.picklist(
    ["connected", "disconnected", "needs_reconnect"],
    "must be connected, disconnected or needs_reconnect",
  ),
  label: v.optional(
    v.pipe(Name(200), v.description("What it is connected as, e.g. a shop domain.")),
  ),
});
export type ConnectionUpdate = v.InferOutput<typeof ConnectionUpdateSchema>;

/** Each catalogue record as the business's systems send it: the stored record but `updatedAt`. */
const WorkflowInputSchema = v.strictObject({
  id: OperatorIdSchema,
  name: Name(200),
  description: Text(2000),
  kind: v.picklist(["live", "paid", "internal"], "must be live, paid or internal"),
  costPerRunCents: Cents,
  status: v.picklist(["active", "paused"], "must be active or paused"),
});
const TriggerInputSchema = v.strictObject({
  id: OperatorIdSchema,
  name: Name(200),
  event: v.pipe(Name(100), v.description("The event that fires it, e.g. `order.created`.")),
  workflowId: v.pipe(OperatorIdSchema, v.description("A workflow of the same catalogue.")),
  enabled: v.boolean(),
});
/** Bounded so that a pack stays within one store record (64 KiB), whatever its characters. */
const PackInputSchema = v.strictObject({
  id: OperatorIdSchema,
  name: Name(200),
  vertical: Name(100),
  enabled: v.boolean(),
  version: Name(50),
  latestVersion: Name(50),
  settings: v.pipe(
    v.record(
      v.pipe(v.string(), v.minLength(1), v.maxLength(64, "must be at most 64 characters")),
      v.union([Text(500), v.pipe(v.number(), v.finite()), v.boolean()]),
    ),
    v.check((s) => Object.keys(s).length <= 50, "must have at most 50 settings"),
  ),
});
const SubscriptionInputSchema = v.strictObject({
  plan: v.picklist(PLANS, `must be one of ${PLANS.join(", ")}`),
  status: v.picklist(
    ["active", "past_due", "canceled", "none"],
    "must be active, past_due, canceled or none",
  ),
  seats: v.pipe(Count, v.maxValue(1_000_000, "must be at most 1000000")),
  monthlyCents: Cents,
  paymentMethod: v.nullable(Name(100)),
  usage: v.strictObject({ runs: Count, includedRuns: Count }),
  renewsAt: v.nullable(Time),
});
const InvoiceInputSchema = v.strictObject({
  id: OperatorIdSchema,
  number: Name(100),
  amountCents: Cents,
  currency: v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, "must be an ISO 4217 code such as USD")),
  status: v.picklist(["paid", "open", "void"], "must be paid, open or void"),
  issuedAt: Time,
});

/**
 * Caps that keep the writes of one replacement inside one store commit (Deno KV takes at most 1000
 * writes, 80 KiB of keys written and 800 KiB in all in one atomic operation): 450 records, with
 * keys of at most 64 ASCII characters and a body of at most 256 KiB, beside deletes of the old
 * records (steps before it delete what does not fit; tests/operator/operator_updates_test.ts
 * fills every limit at once).
 */
export const CATALOGUE_LIMITS = {
  workflows: 100,
  triggers: 200,
  packs: 50,
  invoices: 100,
} as const;

const _list = <T extends v.GenericSchema>(item: T, max: number) =>
  v.pipe(v.array(item), v.maxLength(max, `must have at most ${max} items`));

export const CatalogueInputSchema = v.strictObject({
  workflows: _list(WorkflowInputSchema, CATALOGUE_LIMITS.workflows),
  triggers: _list(TriggerInputSchema, CATALOGUE_LIMITS.triggers),
  packs: _list(PackInputSchema, CATALOGUE_LIMITS.packs),
  billing: v.strictObject({
    subscription: SubscriptionInputSchema,
    invoices: _list(InvoiceInputSchema, CATALOGUE_LIMITS.invoices),
  }),
});
export type CatalogueInput = v.InferOutput<typeof CatalogueInputSchema>;

export interface Catalogue {
  readonly workflows: Workflow[];
  readonly triggers: Trigger[];
  readonly packs: Pack[];
  readonly billing: { readonly subscription: Subscription; readonly invoices: Invoice[] };
}

/** Why an update was not applied, as the operator API answers it. */
export type Refusal =
  | { readonly ok: false; readonly status: 400; readonly error: "invalid_request"; message: string }
  | { readonly ok: false; readonly status: 404; readonly error: "not_found"; message: string }
  | { readonly ok: false; readonly status: 409; readonly error: "conflict"; message: string };

export type Outcome<T> = { readonly ok: true; readonly value: T } | Refusal;

export interface OperatorUpdates {
  getRun(businessId: string, runId: string): Promise<Outcome<Run>>;
  updateRun(businessId: string, runId: string, update: RunUpdate): Promise<Outcome<Run>>;
  updateConnection(
    businessId: string,
    connectionId: string,
    update: ConnectionUpdate,
  ): Promise<Outcome<Connection>>;
  replaceCatalogue(businessId: string, catalogue: CatalogueInput): Promise<Outcome<Catalogue>>;
}

export interface OperatorUpdatesDeps {
  readonly store: Store;
  readonly now: () => number;
  readonly accounts: Pick<Accounts, "getBusiness">;
  readonly workspace: Workspace;
  readonly audit: AuditLog;
}

type Planned<T> =
  | { value: T; checks: AtomicCheck[]; mutations: Mutation[] }
  | { unchanged: T }
  | { step: { checks: AtomicCheck[]; mutations: Mutation[] } };

/** Concurrent writers (an agent, another report) make a commit fail; it is planned again. */
const COMMIT_ATTEMPTS = 5;

const FINAL: ReadonlySet<Run["status"]> = new Set(["succeeded", "failed"]);

const _notFound = (message: string): Refusal => ({
  ok: false,
  status: 404,
  error: "not_found",
  message,
});

export function createOperatorUpdates(deps: OperatorUpdatesDeps): OperatorUpdates {
  const { store, now, accounts, workspace, audit } = deps;

  const noBusiness = async (businessId: string): Promise<Refusal | null> =>
    await accounts.getBusiness(businessId) === null
      ? _notFound(`no business "${businessId}"`)
      : null;

  /**
   * Plans against what it reads and commits only while that still holds. A step is a commit on
   * the way: once it is made, planning goes on from what it left.
   */
  const commitPlanned = async <T>(
    plan: () => Promise<Outcome<Planned<T>>>,
  ): Promise<Outcome<T>> => {
    for (let attempt = 1;;) {
      const planned = await plan();
      if (!planned.ok) return planned;
      if ("unchanged" in planned.value) return { ok: true, value: planned.value.unchanged };
      if ("step" in planned.value) {
        const { checks, mutations } = planned.value.step;
        if (await store.commit(checks, mutations)) continue;
      } else {
        const { value, checks, mutations } = planned.value;
        if (await store.commit(checks, mutations)) return { ok: true, value };
      }
      if (attempt++ === COMMIT_ATTEMPTS) {
        return {
          ok: false,
          status: 409,
          error: "conflict",
          message: "the record kept changing while this update was applied; send it again",
        };
      }
    }
  };

  /**
   * One replacement at a time per business in this process; each applies whole, in turn. Across
   * processes the catalogue mark serialises them: each commit checks the version it read.
   */
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(businessId: string, run: () => Promise<T>): Promise<T> => {
    const result = (turns.get(businessId) ?? Promise.resolve()).then(run);
    const settled = result.then(() => {}, () => {});
    turns.set(businessId, settled);
    settled.then(() => {
      if (turns.get(businessId) === settled) turns.delete(businessId);
    });
    return result;
  };

  /**
   * Replaces the catalogue in one commit that checks and bumps the catalogue mark. When the old
   * records to delete would not fit in it (a catalogue grown past the caps), steps before it
   * delete them, triggers first so that none outlives its workflow, each step checking and bumping
   * the mark too; the last commit then writes the whole new catalogue at once.
   */
  const replace = (businessId: string, input: CatalogueInput) =>
    commitPlanned<Catalogue>(async () => {
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
    });

  const updates: OperatorUpdates = {
    async getRun(businessId, runId) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      const run = await workspace.runs.get(businessId, runId);
      return run
        ? { ok: true, value: run.value }
        : _notFound(`no workflow run "${runId}" in business "${businessId}"`);
    },

    async updateRun(businessId, runId, update) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      return await commitPlanned(async () => {
        const entry = await workspace.runs.get(businessId, runId);
        if (!entry) return _notFound(`no workflow run "${runId}" in business "${businessId}"`);
        const run = entry.value;
        if (FINAL.has(run.status)) {
          // A repeated final report (a retry after a lost answer) is answered as it was.
          const same = update.status === run.status &&
            (update.result === undefined || update.result === run.result) &&
            (update.costCents === undefined || update.costCents === run.costCents);
          if (same) return { ok: true, value: { unchanged: run } };
          return {
            ok: false,
            status: 409,
            error: "conflict",
            message:
              `workflow run "${runId}" already ${run.status}: a finished run does not change`,
          };
        }
        const at = now();
        const next: Run = {
          ...run,
          status: update.status,
          finishedAt: FINAL.has(update.status) ? at : null,
          result: update.result ?? run.result,
          costCents: update.costCents ?? run.costCents,
          updatedAt: at,
        };
        const details = [
          `${run.status} → ${next.status}`,
          update.costCents !== undefined && `cost ${money(update.costCents)}`,
          update.result !== undefined && "result recorded",
        ].filter((d): d is string => typeof d === "string");
        return {
          ok: true,
          value: {
            value: next,
            checks: [{ key: entry.key, version: entry.version }],
            mutations: [
              { type: "set", key: entry.key, value: next },
              audit.entry(operatorEntry(
                businessId,
                null,
                "updateWorkflowRun",
                `Workflow run ${runId} of ${run.workflowId}: ${details.join("; ")}`,
                run.gateId,
              )),
            ],
          },
        };
      });
    },

    async updateConnection(businessId, connectionId, update) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      return await commitPlanned(async () => {
        const entry = await workspace.connections.get(businessId, connectionId);
        if (!entry) {
          return _notFound(`no connection "${connectionId}" in business "${businessId}"`);
        }
        const connection = entry.value;
        const next: Connection = {
          ...connection,
          status: update.status,
          label: update.label ?? connection.label,
          updatedAt: now(),
        };
        const relabelled = next.label === connection.label ? "" : `, now ${next.label}`;
        return {
          ok: true,
          value: {
            value: next,
            checks: [{ key: entry.key, version: entry.version }],
            mutations: [
              { type: "set", key: entry.key, value: next },
              audit.entry(operatorEntry(
                businessId,
                null,
                "updateConnection",
                `Connection ${connectionId} (${connection.service}, ${connection.label}` +
                  `${relabelled}): ${connection.status} → ${next.status}`,
                null,
              )),
            ],
          },
        };
      });
    },

    async replaceCatalogue(businessId, input) {
      const missing = await noBusiness(businessId);
      if (missing) return missing;
      const invalid = _catalogueProblem(input);
      if (invalid) return { ok: false, status: 400, error: "invalid_request", message: invalid };
      return await inTurn(businessId, () => replace(businessId, input));
    },
  };

  return updates;
}

/** What the schema cannot see: ids repeated in a list, and triggers of unknown workflows. */
function _catalogueProblem(input: CatalogueInput): string | null {
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
