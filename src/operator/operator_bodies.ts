// The operator API's bodies: what the business's own systems send (the records of records.ts
// without what the server keeps itself, parsed at the edge by these schemas, with the caps that
// keep one update inside one store commit) and what an update answers.
import * as v from "valibot";
import { oneLine } from "../accounts/schemas.ts";
import {
  type Invoice,
  type Pack,
  PLANS,
  type Subscription,
  type Trigger,
  type Workflow,
} from "../workspace/domain/records.ts";

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
