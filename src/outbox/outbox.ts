/**
 * The durable outbox: a queue of deliveries (mail today, signed events later) kept in the
 * store. A delivery is recorded in the same commit as whatever it announces (a sign-in link,
 * an invitation), so neither exists without the other, and a sender delivers it later.
 *
 * Claims are safe between processes: a sender claims a delivery with a versioned commit
 * (only one of several racing senders wins) and holds it for a lease; a sender that dies
 * mid-delivery loses its claim when the lease runs out, and another sends again. So a crash
 * between sending and marking sent sends at most once more: at-least-once, because a lost
 * sign-in mail locks a person out while a second copy of it is harmless.
 */
import type { Entry, Key, Mutation, Store } from "../store/store.ts";

export type DeliveryState = "pending" | "sending" | "sent" | "failed";

export interface Delivery {
  readonly id: string;
  /** Which sender handles it: "mail". */
  readonly kind: string;
  /** What the handler needs; cleared once sent, since it may carry a live link. */
  readonly payload: unknown;
  /** What an operator sees in listings: never a link or a secret ("to: subject"). */
  readonly label: string;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly createdAt: number;
  /** When a pending delivery may be tried (again). */
  readonly nextAttemptAt: number;
  /** While sending: the claimer's token and when its claim lapses. */
  readonly claim: { readonly token: string; readonly until: number } | null;
  /** Past this moment the delivery is dropped, not sent (the link it carries has expired). */
  readonly expiresAt: number | null;
  readonly lastError: string | null;
  /** A record whose `delivery` field follows this delivery's state (an invitation). */
  readonly reportTo: Key | null;
}

/** Longer than the slowest delivery attempt (the SMTP transport's timeouts add up to less). */
export const LEASE_MS = 2 * 60 * 1000;
/** Retry delays double from 5 s and are capped at 5 minutes: a sign-in link lives 15. */
const FIRST_RETRY_MS = 5 * 1000;
export const MAX_RETRY_MS = 5 * 60 * 1000;
/** A delivery without an expiry that keeps failing transiently is given up after a day. */
export const GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
/** How long a finished (sent or failed) delivery stays listed. */
const KEEP_FINISHED_MS = 7 * 24 * 60 * 60 * 1000;

/** Delay before attempt `attempts + 1`, after `attempts` failed ones. */
export function retryDelay(attempts: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(attempts - 1, 0), MAX_RETRY_MS);
}

const PREFIX = ["outbox", "delivery"] as const;
const _key = (id: string): Key => [...PREFIX, id];

export interface RecordOptions {
  readonly kind: string;
  readonly payload: unknown;
  readonly label: string;
  readonly expiresAt?: number | null;
  readonly reportTo?: Key | null;
}

/** How one attempt ended, as the sender tells the outbox. */
export type AttemptOutcome =
  | { readonly kind: "sent" }
  | { readonly kind: "retry"; readonly error: string }
  | { readonly kind: "failed"; readonly error: string };

export interface Outbox {
  /**
   * The mutation recording a delivery, for the caller's own commit. It is recorded claimed
   * by the caller, who tries it at once (no commit spent on claiming it); should the caller
   * die first, any sender takes it over when that claim lapses.
   */
  record(options: RecordOptions): { readonly delivery: Delivery; readonly mutation: Mutation };
  get(id: string): Promise<Delivery | null>;
  /** Deliveries in creation order, optionally only those in the given states. */
  list(states?: readonly DeliveryState[]): Promise<Delivery[]>;
  /**
   * Claims a delivery that is due (pending and its time has come, or sending with a lapsed
   * claim). Returns it claimed, or null when it is not due or another claimer won. One past
   * its expiry reads as absent (the store expires it with its link): dropped, never sent.
   */
  claim(id: string): Promise<Delivery | null>;
  /** Records an attempt's outcome, if the claim is still ours; returns the new state or null. */
  finish(claimed: Delivery, outcome: AttemptOutcome): Promise<Delivery | null>;
  /** Makes a pending or failed delivery due now (the admin's retry). */
  retryNow(id: string): Promise<Delivery | null>;
  /** The earliest moment something in the outbox may become due, or null when nothing waits. */
  nextDueAt(): Promise<number | null>;
}

export function createOutbox(deps: { store: Store; now: () => number }): Outbox {
  const { store, now } = deps;

  /** The store expiry of a delivery: its own expiry while unsent, a retention once finished. */
  const expireIn = (delivery: Delivery): number | undefined => {
    if (delivery.state === "sent" || delivery.state === "failed") {
      return KEEP_FINISHED_MS;
    }
    return delivery.expiresAt === null ? undefined : Math.max(delivery.expiresAt - now(), 1);
  };

  const put = (delivery: Delivery): Mutation => {
    const ttl = expireIn(delivery);
    return ttl === undefined
      ? { type: "set", key: _key(delivery.id), value: delivery }
      : { type: "set", key: _key(delivery.id), value: delivery, expireIn: ttl };
  };

  /** Writes `next` if `entry` is unchanged, with the report record following its state. */
  const replace = async (entry: Entry<Delivery>, next: Delivery): Promise<boolean> => {
    const checks = [{ key: entry.key, version: entry.version }];
    const mutations: Mutation[] = [put(next)];
    if (next.reportTo !== null && next.state !== entry.value.state) {
      const report = await store.get<Record<string, unknown>>(next.reportTo);
      if (report) {
        checks.push({ key: report.key, version: report.version });
        mutations.push({
          type: "set",
          key: report.key,
          value: { ...report.value, delivery: next.state === "sending" ? "pending" : next.state },
        });
      }
    }
    return await store.commit(checks, mutations);
  };

  const read = (id: string) => store.get<Delivery>(_key(id));

  return {
    record(options) {
      const createdAt = now();
      // Creation time first, so the store lists deliveries oldest first.
      const id = `${createdAt.toString(36).padStart(10, "0")}-${crypto.randomUUID()}`;
      const delivery: Delivery = {
        id,
        kind: options.kind,
        payload: options.payload,
        label: options.label,
        state: "sending",
        attempts: 1,
        createdAt,
        nextAttemptAt: createdAt,
        claim: { token: crypto.randomUUID(), until: createdAt + LEASE_MS },
        expiresAt: options.expiresAt ?? null,
        lastError: null,
        reportTo: options.reportTo ?? null,
      };
      return { delivery, mutation: put(delivery) };
    },

    async get(id) {
      return (await read(id))?.value ?? null;
    },

    async list(states) {
      const deliveries: Delivery[] = [];
      for await (const entry of store.list<Delivery>(PREFIX)) {
        if (!states || states.includes(entry.value.state)) deliveries.push(entry.value);
      }
      return deliveries;
    },

    async claim(id) {
      const entry = await read(id);
      if (!entry) return null;
      const delivery = entry.value;
      const at = now();
      const due = (delivery.state === "pending" && delivery.nextAttemptAt <= at) ||
        (delivery.state === "sending" && delivery.claim !== null && delivery.claim.until <= at);
      if (!due) return null;
      const claimed: Delivery = {
        ...delivery,
        state: "sending",
        attempts: delivery.attempts + 1,
        claim: { token: crypto.randomUUID(), until: at + LEASE_MS },
      };
      return (await replace(entry, claimed)) ? claimed : null;
    },

    async finish(claimed, outcome) {
      const entry = await read(claimed.id);
      // Our claim lapsed and another sender took the delivery over: it decides now.
      if (!entry || entry.value.claim?.token !== claimed.claim?.token) return null;
      const at = now();
      const base = { ...entry.value, claim: null };
      let next: Delivery;
      if (outcome.kind === "sent") {
        next = { ...base, state: "sent", payload: null, lastError: null };
      } else if (
        outcome.kind === "failed" ||
        (base.expiresAt === null && at - base.createdAt >= GIVE_UP_AFTER_MS)
      ) {
        next = { ...base, state: "failed", lastError: outcome.error };
      } else {
        next = {
          ...base,
          state: "pending",
          nextAttemptAt: at + retryDelay(base.attempts),
          lastError: outcome.error,
        };
      }
      return (await replace(entry, next)) ? next : null;
    },

    async retryNow(id) {
      const entry = await read(id);
      if (!entry || (entry.value.state !== "pending" && entry.value.state !== "failed")) {
        return null;
      }
      const next: Delivery = { ...entry.value, state: "pending", nextAttemptAt: now() };
      return (await replace(entry, next)) ? next : null;
    },

    async nextDueAt() {
      let earliest: number | null = null;
      for await (const { value } of store.list<Delivery>(PREFIX)) {
        const at = value.state === "pending"
          ? value.nextAttemptAt
          : value.state === "sending"
          ? value.claim?.until ?? null
          : null;
        if (at !== null && (earliest === null || at < earliest)) earliest = at;
      }
      return earliest;
    },
  };
}
