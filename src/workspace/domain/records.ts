/**
 * The business records behind the workspace tools (spec §2 leaves their fields "not shown";
 * these are ours). Each schema is both the stored shape and the tools' output schema, so a
 * tool's outputSchema cannot drift from what the store holds. The records the business's own
 * systems keep true through the operator API carry `updatedAt`: when they were last written,
 * by those systems or by a change made here.
 */
import * as v from "valibot";

const Id = v.string();
const Time = v.pipe(v.number(), v.description("Milliseconds since the epoch."));
const UpdatedAt = v.pipe(
  v.number(),
  v.description("When the record was last written, in milliseconds since the epoch."),
);
const Cents = v.pipe(v.number(), v.integer(), v.description("An amount in cents."));

/** An amount in cents as the summaries show it: `$12.50`. */
export const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export const WorkflowSchema = v.object({
  id: Id,
  name: v.string(),
  description: v.string(),
  /** live: acts on real systems; paid: each run is billed; both need an approved start. */
  kind: v.picklist(["live", "paid", "internal"]),
  costPerRunCents: Cents,
  status: v.picklist(["active", "paused"]),
  updatedAt: UpdatedAt,
});
export type Workflow = v.InferOutput<typeof WorkflowSchema>;

export const RunSchema = v.object({
  id: Id,
  workflowId: Id,
  status: v.picklist(["queued", "running", "succeeded", "failed"]),
  startedAt: Time,
  finishedAt: v.nullable(Time),
  /** The account that approved the start, or null for runs from before this server. */
  approvedBy: v.nullable(Id),
  gateId: v.nullable(Id),
  /** What the business's systems reported when it ended (operator API), or null. */
  result: v.nullable(v.string()),
  /** What the run cost, as the business's systems reported it, or null while unknown. */
  costCents: v.nullable(Cents),
  updatedAt: UpdatedAt,
});
export type Run = v.InferOutput<typeof RunSchema>;

export const CONNECTION_KINDS = ["commerce", "helpdesk", "mailbox", "chat", "other"] as const;
export const ConnectionSchema = v.object({
  id: Id,
  kind: v.picklist(CONNECTION_KINDS),
  service: v.string(),
  /** What it is connected as, e.g. a shop domain or an inbox address. */
  label: v.string(),
  status: v.picklist(["connected", "disconnected", "needs_reconnect"]),
  updatedAt: Time,
});
export type Connection = v.InferOutput<typeof ConnectionSchema>;

export const InvitationSchema = v.object({
  id: Id,
  email: v.string(),
  role: v.picklist(["owner", "member"]),
  /** The invitation mail: waiting in the outbox (pending), sent, or refused (failed). */
  delivery: v.picklist(["pending", "sent", "failed", "delivered", "bounced", "accepted"]),
  sentAt: Time,
});
export type Invitation = v.InferOutput<typeof InvitationSchema>;

export const TriggerSchema = v.object({
  id: Id,
  name: v.string(),
  /** The event that fires it, e.g. `order.created`. */
  event: v.string(),
  workflowId: Id,
  enabled: v.boolean(),
  updatedAt: UpdatedAt,
});
export type Trigger = v.InferOutput<typeof TriggerSchema>;

export const SettingValueSchema = v.union([v.string(), v.number(), v.boolean()]);
export const PackSchema = v.object({
  id: Id,
  name: v.string(),
  vertical: v.string(),
  enabled: v.boolean(),
  version: v.string(),
  latestVersion: v.string(),
  settings: v.record(v.string(), SettingValueSchema),
  updatedAt: UpdatedAt,
});
export type Pack = v.InferOutput<typeof PackSchema>;

export const PLANS = ["none", "starter", "growth", "scale"] as const;
export const SubscriptionSchema = v.object({
  plan: v.picklist(PLANS),
  status: v.picklist(["active", "past_due", "canceled", "none"]),
  seats: v.pipe(v.number(), v.integer()),
  monthlyCents: Cents,
  /** e.g. `visa ending 4242`, or null when no payment method is on file. */
  paymentMethod: v.nullable(v.string()),
  usage: v.object({ runs: v.number(), includedRuns: v.number() }),
  renewsAt: v.nullable(Time),
  /** null only while the business has no subscription record at all. */
  updatedAt: v.nullable(UpdatedAt),
});
export type Subscription = v.InferOutput<typeof SubscriptionSchema>;

export const InvoiceSchema = v.object({
  id: Id,
  number: v.string(),
  amountCents: Cents,
  currency: v.string(),
  status: v.picklist(["paid", "open", "void"]),
  issuedAt: Time,
  updatedAt: UpdatedAt,
});
export type Invoice = v.InferOutput<typeof InvoiceSchema>;

export const AutomationSchema = v.object({
  /** Activity name -> enabled. Revoking authority never enables a disabled activity. */
  activities: v.record(v.string(), v.boolean()),
  automaticActions: v.object({
    enabled: v.boolean(),
    maxPerDay: v.pipe(v.number(), v.integer()),
    maxAmountCents: Cents,
  }),
  updatedAt: Time,
});
export type Automation = v.InferOutput<typeof AutomationSchema>;

export const SkillSchema = v.object({
  id: Id,
  name: v.string(),
  description: v.string(),
  instructions: v.string(),
  installedAt: Time,
  installedBy: Id,
});
export type Skill = v.InferOutput<typeof SkillSchema>;

/** An external write whose outcome is unknown (a timeout mid-call), awaiting reconciliation. */
export const EffectSchema = v.object({
  id: Id,
  connectionId: Id,
  description: v.string(),
  status: v.picklist(["unknown", "applied", "not_applied", "retried"]),
  observedAt: Time,
});
export type Effect = v.InferOutput<typeof EffectSchema>;

export const NotificationSettingsSchema = v.object({
  /** Whether approval decisions are e-mailed to this account. */
  approvalEmails: v.boolean(),
  /** The linked chat-workspace account, e.g. `@dana`, or null. */
  chatAccount: v.nullable(v.string()),
});
export type NotificationSettings = v.InferOutput<typeof NotificationSettingsSchema>;

export const MessageSchema = v.object({
  role: v.picklist(["user", "agent"]),
  text: v.string(),
  at: Time,
});
export const ConversationSchema = v.object({
  id: Id,
  title: v.string(),
  createdAt: Time,
  messages: v.array(MessageSchema),
});
export type Conversation = v.InferOutput<typeof ConversationSchema>;
