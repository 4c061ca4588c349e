/**
 * Store-backed business records, one collection per kind under `["ws", businessId, kind]`.
 * Writes that must happen once (a gate's effect) go through `store.commit` with the
 * versions read here; plain reads and owner-authorized direct writes use these helpers.
 */
import { createUpstreamPins, type UpstreamPins } from "./upstream_pins.ts";
import type { Entry, Key, Store } from "../../store/store.ts";
import type {
  Automation,
  Connection,
  Effect,
  Invitation,
  Invoice,
  NotificationSettings,
  Pack,
  Run,
  Skill,
  Subscription,
  Trigger,
  Workflow,
} from "./records.ts";

export interface Collection<T extends { readonly id: string }> {
  key(businessId: string, id: string): Key;
  get(businessId: string, id: string): Promise<Entry<T> | null>;
  list(businessId: string): Promise<T[]>;
  put(businessId: string, record: T): Promise<void>;
}

/** A record that exists once per business (or per member of a business). */
export interface Singleton<T> {
  key(businessId: string, ...rest: string[]): Key;
  get(businessId: string, ...rest: string[]): Promise<Entry<T> | null>;
  put(record: T, businessId: string, ...rest: string[]): Promise<void>;
}

export interface Workspace {
  readonly store: Store;
  readonly workflows: Collection<Workflow>;
  readonly runs: Collection<Run>;
  readonly connections: Collection<Connection>;
  readonly invitations: Collection<Invitation>;
  readonly triggers: Collection<Trigger>;
  readonly packs: Collection<Pack>;
  readonly invoices: Collection<Invoice>;
  readonly skills: Collection<Skill>;
  readonly effects: Collection<Effect>;
  readonly subscription: Singleton<Subscription>;
  /** Bumped by every catalogue replacement, which checks it: two cannot merge. */
  readonly catalogue: Singleton<CatalogueMark>;
  readonly automation: Singleton<Automation>;
  /** Per business and account: `get(businessId, accountId)`. */
  readonly notificationSettings: Singleton<NotificationSettings>;
  /** Upstream tool definitions as approved for the business. */
  readonly upstreamPins: UpstreamPins;
}

/** When the catalogue was last replaced, or a step of a replacement taken. */
export interface CatalogueMark {
  readonly replacedAt: number;
}

export const NO_SUBSCRIPTION: Subscription = {
  plan: "none",
  status: "none",
  seats: 0,
  monthlyCents: 0,
  paymentMethod: null,
  usage: { runs: 0, includedRuns: 0 },
  renewsAt: null,
  updatedAt: null,
};

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  approvalEmails: true,
  chatAccount: null,
};

export function createWorkspace(store: Store): Workspace {
  const collection = <T extends { readonly id: string }>(kind: string): Collection<T> => {
    const key = (businessId: string, id: string): Key => ["ws", businessId, kind, id];
    return {
      key,
      get: (businessId, id) => store.get<T>(key(businessId, id)),
      async list(businessId) {
        const records: T[] = [];
        for await (const entry of store.list<T>(["ws", businessId, kind])) {
          records.push(entry.value);
        }
        return records;
      },
      put: (businessId, record) => store.set(key(businessId, record.id), record),
    };
  };
  const singleton = <T>(kind: string): Singleton<T> => {
    const key = (businessId: string, ...rest: string[]): Key => ["ws", businessId, kind, ...rest];
    return {
      key,
      get: (businessId, ...rest) => store.get<T>(key(businessId, ...rest)),
      put: (record, businessId, ...rest) => store.set(key(businessId, ...rest), record),
    };
  };
  return {
    store,
    workflows: collection("workflow"),
    runs: collection("run"),
    connections: collection("connection"),
    invitations: collection("invitation"),
    triggers: collection("trigger"),
    packs: collection("pack"),
    invoices: collection("invoice"),
    skills: collection("skill"),
    effects: collection("effect"),
    subscription: singleton("subscription"),
    catalogue: singleton("catalogue"),
    automation: singleton("automation"),
    notificationSettings: singleton("notify"),
    upstreamPins: createUpstreamPins(store),
  };
}
