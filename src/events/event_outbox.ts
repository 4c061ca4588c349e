/**
 * Events out: what an agent's request changed once a human approved it (and what a tool
 * wrote directly) becomes a Standard Webhooks message `{type, timestamp, data}` to the
 * operator's endpoint (VESTIBULE_WEBHOOK_URL). Each event is recorded in the outbox in the
 * same commit as the change it announces, in its business's queue, so a business's events
 * arrive in the order of their changes, at least once, across restarts and crashes.
 */
import type { Outbox } from "../outbox/outbox.ts";
import { DeliveryError, type DeliveryHandler, type Sender } from "../outbox/sender.ts";
import type { AtomicCheck, Mutation } from "../store/store.ts";
import { webhookHeaders } from "./webhook_signature.ts";

/** The outbox kind of an event delivery. */
export const WEBHOOK_KIND = "webhook";

/** One event before it is recorded; `data` always names the business. */
export interface NewEvent {
  /** `workflow_run.requested`, `approval.decided`, …: docs/integrating.md "Events". */
  readonly type: string;
  readonly data: { readonly businessId: string } & Readonly<Record<string, unknown>>;
}

export interface EventOutbox {
  /**
   * The checks and mutations recording `events` of one business, in this order, for the
   * caller's commit; a failed commit is retried from a fresh call. Nothing when no endpoint
   * is configured.
   */
  record(
    businessId: string,
    events: readonly NewEvent[],
  ): Promise<{ readonly checks: readonly AtomicCheck[]; readonly mutations: readonly Mutation[] }>;
  /** After the commit: the sender tries what was recorded soon, off the request's path. */
  dispatch(): void;
  /** Whether events reach a receiver: false without VESTIBULE_WEBHOOK_URL. */
  readonly delivers: boolean;
}

/** Where events go (VESTIBULE_WEBHOOK_URL). */
export interface WebhookTarget {
  readonly url: string;
  /** The HMAC key of VESTIBULE_WEBHOOK_SECRET_FILE's secret (webhook_signature.ts). */
  readonly key: CryptoKey;
}

/** The outbox queue of a business's events: delivered in the order recorded. */
export const eventQueueOf = (businessId: string): string => `events/${businessId}`;

/** Without VESTIBULE_WEBHOOK_URL: nothing is recorded, since nothing would be delivered. */
export const NO_EVENTS: EventOutbox = Object.freeze({
  record: () => Promise.resolve({ checks: [], mutations: [] }),
  dispatch: () => {},
  delivers: false,
});

export function createEventOutbox(
  deps: { outbox: Outbox; sender: Sender; now: () => number },
): EventOutbox {
  const { outbox, sender, now } = deps;
  return {
    delivers: true,
    async record(businessId, events) {
      if (events.length === 0) return { checks: [], mutations: [] };
      const timestamp = new Date(now()).toISOString();
      return await outbox.recordInQueue(
        eventQueueOf(businessId),
        events.map((event) => ({
          kind: WEBHOOK_KIND,
          payload: { body: JSON.stringify({ type: event.type, timestamp, data: event.data }) },
          label: `${event.type} of business ${businessId}`,
        })),
      );
    },
    dispatch: () => sender.wake(),
  };
}

/** One attempt may take this long; well inside the outbox's lease. */
const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * The sender's handler for events: POSTs the stored body, signed afresh with this attempt's
 * time (receivers refuse old timestamps), under the delivery's id, which stays the same on
 * every retry so receivers drop duplicates. A 2xx is delivered. 408, 429, 5xx, redirects
 * and no answer are retried; any other 4xx means the receiver examined this message and
 * refuses it, so the same bytes would be refused again: given up at once (and the queue goes
 * on) rather than holding the business's later events for a day. The operator sees it in
 * `deno task admin list-outbox` and may send it again with `retry-delivery`.
 */
export function webhookDeliveryHandler(
  deps: { target: WebhookTarget; fetch: typeof fetch; now: () => number },
): DeliveryHandler {
  const { target } = deps;
  return async (delivery) => {
    const body = (delivery.payload as { body?: unknown } | null)?.body;
    if (typeof body !== "string") throw new DeliveryError("the stored event is malformed", true);
    const headers = await webhookHeaders(
      target.key,
      delivery.id,
      Math.floor(deps.now() / 1000),
      body,
    );
    let response: Response;
    try {
      response = await deps.fetch(target.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
      });
    } catch (error) {
      // The error's own message may quote the URL, which can carry a credential: name only.
      const name = error instanceof Error ? error.name : "error";
      throw new DeliveryError(
        name === "TimeoutError"
          ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`
          : `the endpoint could not be reached (${name})`,
        false,
      );
    }
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) return;
    const status = response.status;
    const retried = status === 408 || status === 429 || status < 400 || status >= 500;
    throw new DeliveryError(`the endpoint answered HTTP ${status}`, !retried);
  };
}
