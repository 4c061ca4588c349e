/**
 * Demo data for `--demo` / VESTIBULE_DEMO=1: one living business so a newcomer can sign in
 * (as demo-owner@example.com; the link goes to the configured mail sink) and see workflows,
 * runs, connections, members, triggers, packs and billing. Seeded once; a restart with the
 * same data file leaves it alone. Without the switch nothing is seeded.
 */
import type { Accounts } from "../../accounts/model.ts";
import type { Store } from "../../store/store.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type {
  Automation,
  Connection,
  Effect,
  Invitation,
  Invoice,
  Pack,
  Run,
  Subscription,
  Trigger,
  Workflow,
} from "./records.ts";
import { createWorkspace } from "./workspace.ts";

export const DEMO_OWNER_EMAIL = "demo-owner@example.com";
export const DEMO_MEMBER_EMAIL = "demo-member@example.com";
export const DEMO_BUSINESS_NAME = "Demo Outfitters";

const DAY = 86_400_000;

export interface DemoDeps {
  readonly store: Store;
  readonly accounts: Accounts;
  readonly now: () => number;
}

const MARKER = ["demo", "business"];
/** Held by the one process seeding; lapses if it dies mid-seed, so another takes over. */
const CLAIM = ["demo", "seeding"];
const CLAIM_MS = 60_000;
const POLL_MS = 50;

/**
 * Seeds the demo business unless it is already there; returns its id. Replicas starting together
 * seed it once: one claims the seeding, the others wait for its marker.
 */
export async function seedDemo(deps: DemoDeps): Promise<string> {
  const { store } = deps;
  return await retryCommit(async () => {
    const marker = await store.get<string>(MARKER);
    if (marker) return marker.value;
    const claimed = await store.commit([{ key: CLAIM, version: null }], [
      { type: "set", key: CLAIM, value: true, expireIn: CLAIM_MS },
    ]);
    if (claimed) return await _seed(deps);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    return RETRY;
  });
}

async function _seed(deps: DemoDeps): Promise<string> {
  const { store, accounts, now } = deps;
  const workspace = createWorkspace(store);
  const { business } = await accounts.createAccountWithBusiness(
    DEMO_OWNER_EMAIL,
    DEMO_BUSINESS_NAME,
  );
  const b = business.id;
  await accounts.addMember(b, DEMO_MEMBER_EMAIL, "member");
  const demo = _demoRecords(now());
  for (const workflow of demo.workflows) await workspace.workflows.put(b, workflow);
  for (const run of demo.runs) await workspace.runs.put(b, run);
  for (const connection of demo.connections) await workspace.connections.put(b, connection);
  for (const invitation of demo.invitations) await workspace.invitations.put(b, invitation);
  for (const trigger of demo.triggers) await workspace.triggers.put(b, trigger);
  for (const pack of demo.packs) await workspace.packs.put(b, pack);
  await workspace.subscription.put(demo.subscription, b);
  for (const invoice of demo.invoices) await workspace.invoices.put(b, invoice);
  await workspace.automation.put(demo.automation, b);
  for (const effect of demo.effects) await workspace.effects.put(b, effect);
  await store.commit([], [{ type: "set", key: MARKER, value: b }, { type: "delete", key: CLAIM }]);
  return b;
}

interface DemoRecords {
  readonly workflows: readonly Workflow[];
  readonly runs: readonly Run[];
  readonly connections: readonly Connection[];
  readonly invitations: readonly Invitation[];
  readonly triggers: readonly Trigger[];
  readonly packs: readonly Pack[];
  readonly subscription: Subscription;
  readonly invoices: readonly Invoice[];
  readonly automation: Automation;
  readonly effects: readonly Effect[];
}

/** The demo business's records as of `t`: a month of history, a renewal in twelve days. */
function _demoRecords(t: number): DemoRecords {
  return {
    workflows: [
      {
        id: "wf-refund-triage",
        name: "Refund triage",
        description: "Reads new refund requests, checks the order and drafts a reply for review.",
        kind: "paid",
        costPerRunCents: 40,
        status: "active",
        updatedAt: t - 30 * DAY,
      },
      {
        id: "wf-restock-alert",
        name: "Restock alert",
        description: "Posts to the team chat when a best-seller drops below ten units.",
        kind: "internal",
        costPerRunCents: 0,
        status: "active",
        updatedAt: t - 30 * DAY,
      },
      {
        id: "wf-order-sync",
        name: "Order sync to helpdesk",
        description: "Copies new orders into helpdesk tickets so agents see order context.",
        kind: "live",
        costPerRunCents: 0,
        status: "paused",
        updatedAt: t - 30 * DAY,
      },
    ],
    runs: [
      _run("run-1001", "wf-refund-triage", "succeeded", t - 2 * DAY),
      _run("run-1002", "wf-refund-triage", "failed", t - DAY),
      _run("run-1003", "wf-restock-alert", "succeeded", t - DAY / 2),
    ],
    connections: [
      {
        id: "conn-shop",
        kind: "commerce",
        service: "Storefront",
        label: "demo-outfitters.example",
        status: "connected",
        updatedAt: t - 30 * DAY,
      },
      {
        id: "conn-helpdesk",
        kind: "helpdesk",
        service: "Helpdesk",
        label: "support.demo-outfitters.example",
        status: "connected",
        updatedAt: t - 20 * DAY,
      },
      {
        id: "conn-mailbox",
        kind: "mailbox",
        service: "Mail",
        label: "orders@demo-outfitters.example",
        status: "needs_reconnect",
        updatedAt: t - 3 * DAY,
      },
    ],
    invitations: [{
      id: "inv-1",
      email: "new-hire@example.com",
      role: "member",
      delivery: "delivered",
      sentAt: t - 2 * DAY,
    }],
    triggers: [
      {
        id: "trg-refund",
        name: "New refund request",
        event: "refund.requested",
        workflowId: "wf-refund-triage",
        enabled: true,
        updatedAt: t - 20 * DAY,
      },
      {
        id: "trg-stock",
        name: "Low stock",
        event: "inventory.low",
        workflowId: "wf-restock-alert",
        enabled: true,
        updatedAt: t - 20 * DAY,
      },
    ],
    packs: [
      {
        id: "pack-apparel",
        name: "Apparel retail",
        vertical: "apparel",
        enabled: true,
        version: "1.2.0",
        latestVersion: "1.3.0",
        settings: { sizeChartReminders: true, returnWindowDays: 30 },
        updatedAt: t - 20 * DAY,
      },
      {
        id: "pack-subscriptions",
        name: "Subscription boxes",
        vertical: "subscriptions",
        enabled: false,
        version: "0.9.0",
        latestVersion: "0.9.0",
        settings: { skipReminderDays: 3 },
        updatedAt: t - 20 * DAY,
      },
    ],
    subscription: {
      plan: "growth",
      status: "active",
      seats: 2,
      monthlyCents: 39_800,
      paymentMethod: "visa ending 4242",
      usage: { runs: 2, includedRuns: 1_000 },
      renewsAt: t + 12 * DAY,
      updatedAt: t - DAY / 2,
    },
    invoices: [
      _invoice("inv-2026-001", "DEMO-0001", 39_800, "paid", t - 48 * DAY),
      _invoice("inv-2026-002", "DEMO-0002", 39_800, "open", t - 18 * DAY),
    ],
    automation: {
      activities: { refunds: true, restock: true, orderSync: false },
      automaticActions: { enabled: false, maxPerDay: 0, maxAmountCents: 0 },
      updatedAt: t - 10 * DAY,
    },
    effects: [{
      id: "eff-tag-order-4411",
      connectionId: "conn-shop",
      description: "Add the tag refund-reviewed to order #4411 (the shop timed out)",
      status: "unknown",
      observedAt: t - DAY,
    }],
  };
}

function _run(id: string, workflowId: string, status: Run["status"], at: number): Run {
  return {
    id,
    workflowId,
    status,
    startedAt: at,
    finishedAt: at + 42_000,
    approvedBy: null,
    gateId: null,
    result: status === "succeeded" ? "Done." : "The shop did not answer.",
    costCents: workflowId === "wf-refund-triage" ? 40 : 0,
    updatedAt: at + 42_000,
  };
}

function _invoice(
  id: string,
  number: string,
  amountCents: number,
  status: Invoice["status"],
  issuedAt: number,
): Invoice {
  return { id, number, amountCents, currency: "USD", status, issuedAt, updatedAt: issuedAt };
}
