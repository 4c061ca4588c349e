/**
 * Delivers what the outbox holds: at once when asked (right after a request recorded a
 * message), and from a timer loop for retries, for what another process recorded and for
 * what a crashed process left claimed. It never throws: store and transport errors are
 * logged, and the delivery is tried again.
 */
import { describeError, logEvent, type LogSink } from "../http/request_log.ts";
import {
  type AttemptOutcome,
  type Delivery,
  type DeliveryState,
  firstInQueues,
  type Outbox,
} from "./outbox.ts";

/** A handler's refusal; `permanent` ones (an SMTP 5xx) are not retried. */
export class DeliveryError extends Error {
  override name = "DeliveryError";
  constructor(message: string, readonly permanent: boolean) {
    super(message);
  }
}

/** Delivers one payload of its kind; throws DeliveryError (or anything, taken as transient). */
export type DeliveryHandler = (delivery: Delivery) => Promise<void>;

/** The loop looks again at least this often, for work other processes recorded. */
const POLL_MS = 30 * 1000;

export interface Sender {
  /** The recorder's attempt at what it recorded; resolves with the state after (never rejects). */
  deliverNow(recorded: Delivery): Promise<DeliveryState | "missing">;
  /** Delivers everything due now, one after another; the loop's step. */
  deliverDue(): Promise<void>;
  /** Brings the loop's next step forward to now: something was recorded to go soon. */
  wake(): void;
  /** Starts the timer loop; resolves when its first pass is done (tests start from quiet). */
  start(): Promise<void>;
  /** Stops the loop and waits for the attempt under way. */
  stop(): Promise<void>;
}

export function createSender(deps: {
  outbox: Outbox;
  handlers: Readonly<Record<string, DeliveryHandler>>;
  log: LogSink;
  now: () => number;
}): Sender {
  const { outbox, handlers, log, now } = deps;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerAt = Infinity;
  let running: Promise<void> | null = null;
  let looping = false;

  const attempt = async (delivery: Delivery): Promise<AttemptOutcome> => {
    const handler = handlers[delivery.kind];
    if (!handler) return { kind: "failed", error: `no sender for kind ${delivery.kind}` };
    try {
      await handler(delivery);
      return { kind: "sent" };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof DeliveryError && error.permanent;
      return { kind: permanent ? "failed" : "retry", error: message };
    }
  };

  const claimAndDeliver = async (id: string): Promise<DeliveryState | "missing" | null> => {
    const delivery = await outbox.claim(id);
    return delivery === null ? null : await deliverClaimed(delivery);
  };

  const deliverClaimed = async (delivery: Delivery): Promise<DeliveryState | "missing"> => {
    const outcome = await attempt(delivery);
    const next = await outbox.finish(delivery, outcome);
    if (outcome.kind !== "sent" && next !== null) {
      logEvent(log, {
        level: "warn",
        message: next.state === "failed"
          ? "delivery failed, not retried"
          : "delivery failed, will retry",
        delivery: delivery.id,
        kind: delivery.kind,
        attempt: next.attempts,
        ...(next.state === "pending"
          ? { retryInSeconds: Math.round((next.nextAttemptAt - now()) / 1000) }
          : {}),
        error: outcome.error,
      });
    }
    if (next?.state === "pending") wakeAt(next.nextAttemptAt);
    return next?.state ?? (await outbox.get(delivery.id))?.state ?? "missing";
  };

  const guarded = async <T>(work: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      logEvent(log, { level: "error", message: "outbox error", ...describeError(error) });
      return fallback;
    }
  };

  /** What may be tried now: due, and first in its queue. */
  const dueNow = async () => {
    const at = now();
    return firstInQueues(await outbox.list(["pending", "sending"])).filter((d) =>
      d.state === "pending" ? d.nextAttemptAt <= at : (d.claim?.until ?? 0) <= at
    );
  };

  const deliverEach = async (due: readonly Delivery[]) => {
    for (const delivery of due) await claimAndDeliver(delivery.id);
  };

  const deliverQueues = async (heads: readonly Delivery[]) => {
    // Again while a queue moved on: what waited behind a finished delivery is due now.
    while (heads.length > 0) {
      let moved = false;
      for (const delivery of heads) {
        const state = await claimAndDeliver(delivery.id);
        if (state === "sent" || state === "failed") moved = true;
      }
      if (!moved) return;
      heads = (await dueNow()).filter((d) => d.queue);
    }
  };

  const deliverDue = async () => {
    const due = await dueNow();
    // Two lanes: an events endpoint that does not answer holds up no sign-in mail.
    await Promise.all([
      deliverEach(due.filter((d) => !d.queue)),
      deliverQueues(due.filter((d) => d.queue)),
    ]);
  };

  const tick = () => {
    timer = null;
    timerAt = Infinity;
    running = (async () => {
      await guarded(deliverDue, undefined);
      const next = looping ? await guarded(() => outbox.nextDueAt(), null) : null;
      // Never sooner than a second: a delivery another sender holds is due again only later.
      const delay = next === null ? POLL_MS : Math.min(Math.max(next - now(), 1000), POLL_MS);
      running = null;
      if (looping) wakeAt(now() + delay);
    })();
  };

  /** Brings the loop's next step forward to `at` (a retry just scheduled by deliverNow). */
  const wakeAt = (at: number) => {
    if (!looping || running !== null || at >= timerAt) return;
    if (timer !== null) clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(tick, Math.max(at - now(), 0));
  };

  return {
    deliverNow: (recorded) => guarded(() => deliverClaimed(recorded), "pending"),
    deliverDue: () => guarded(deliverDue, undefined),
    wake: () => wakeAt(now()),
    async start() {
      if (looping) return;
      looping = true;
      tick();
      await running;
    },
    async stop() {
      looping = false;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      timerAt = Infinity;
      await running;
    },
  };
}
