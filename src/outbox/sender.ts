/**
 * Delivers what the outbox holds: at once when asked (right after a request recorded a
 * message), and from a timer loop for retries, for what another process recorded and for
 * what a crashed process left claimed. It never throws: store and transport errors are
 * logged, and the delivery is tried again. A mail whose link died before it could go is
 * recorded failed and logged as a warning, never sent.
 */
import { NO_TRACING, type Tracing } from "../tracing/tracing.ts";
import { describeError, logEvent, logOutage, type LogSink } from "../http/request_log.ts";
import { StoreUnavailableError } from "../store/store.ts";
import type { AttemptOutcome, Outbox } from "./outbox.ts";
import {
  type Delivery,
  type DeliveryState,
  type DueItem,
  type Lane,
  LINK_EXPIRED,
} from "./delivery.ts";

/** A handler's refusal; `permanent` ones (an SMTP 5xx) are not retried. */
export class DeliveryError extends Error {
  override name = "DeliveryError";
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean) {
    super(message);
    this.permanent = permanent;
  }
}

/** Delivers one payload of its kind; throws DeliveryError (or anything, taken as transient). */
export type DeliveryHandler = (delivery: Delivery) => Promise<void>;

/** The loop looks again at least this often, for work other processes recorded. */
const POLL_MS = 30 * 1000;
/** Due entries a lane reads at a time: the cost of a round does not grow with the backlog. */
const DUE_BATCH = 32;
/**
 * Attempts a lane runs at once. Queue heads are of different queues, so one business's slow
 * receiver holds up only its own queue; mail needs no order among its messages.
 */
const LANE_WIDTH: Readonly<Record<Lane, number>> = { direct: 4, queue: 8 };
const LANES: readonly Lane[] = ["direct", "queue"];

export interface Sender {
  /** The recorder's attempt at what it recorded; resolves with the state after (never rejects). */
  deliverNow(recorded: Delivery): Promise<DeliveryState | "missing">;
  /** Delivers everything due now, both lanes side by side; the loop's step. */
  deliverDue(): Promise<void>;
  /** Brings the loop's next step forward to now: something was recorded to go soon. */
  wake(): void;
  /** Starts the timer loop; resolves when its first pass is done (tests start from quiet). */
  start(): Promise<void>;
  /** Stops the loop and waits for the attempts under way. */
  stop(): Promise<void>;
}

/**
 * Each lane (mail, queued events) has its own timer and pass: a pass working through a long
 * backlog of events never holds up the timer of a mail retry.
 */
interface LaneLoop {
  timer: ReturnType<typeof setTimeout> | null;
  timerAt: number;
  running: Promise<void> | null;
}

export function createSender(deps: {
  outbox: Outbox;
  handlers: Readonly<Record<string, DeliveryHandler>>;
  log: LogSink;
  now: () => number;
  /** A CLIENT span per attempt (`deliver mail`, `deliver event`) when tracing is on. */
  tracing?: Tracing | undefined;
}): Sender {
  const { outbox, handlers, log, now } = deps;
  const tracing = deps.tracing ?? NO_TRACING;
  const loops: Record<Lane, LaneLoop> = {
    direct: { timer: null, timerAt: Infinity, running: null },
    queue: { timer: null, timerAt: Infinity, running: null },
  };
  let looping = false;
  /** Set by stop(): a pass under way ends after the attempts it started. */
  let halted = false;

  const attempt = async (delivery: Delivery): Promise<AttemptOutcome> => {
    // Its link is dead: no use to the person, reported instead of sent.
    if (delivery.expiresAt !== null && delivery.expiresAt <= now()) {
      return { kind: "failed", error: LINK_EXPIRED };
    }
    const handler = handlers[delivery.kind];
    if (!handler) return { kind: "failed", error: `no sender for kind ${delivery.kind}` };
    try {
      if (!tracing.on) await handler(delivery);
      else {
        await tracing.span(`deliver ${delivery.kind}`, {
          kind: "client",
          attributes: { "vestibule.delivery.kind": delivery.kind },
        }, () => handler(delivery));
      }
      return { kind: "sent" };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const permanent = error instanceof DeliveryError && error.permanent;
      return { kind: permanent ? "failed" : "retry", error: message };
    }
  };

  const claimAndDeliver = async (item: DueItem): Promise<DeliveryState | "missing" | null> => {
    const delivery = await outbox.claim(item.id, item);
    return delivery === null ? null : await deliverClaimed(delivery);
  };

  const deliverClaimed = async (delivery: Delivery): Promise<DeliveryState | "missing"> => {
    const outcome = await attempt(delivery);
    const next = await outbox.finish(delivery, outcome);
    if (outcome.kind !== "sent" && next !== null) {
      logEvent(log, {
        level: "warn",
        message: outcome.error === LINK_EXPIRED
          ? "delivery given up: its link expired before it could be sent"
          : next.state === "failed"
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
    if (next?.due !== undefined) wakeAt(delivery.queue ? "queue" : "direct", next.due);
    return next?.state ?? (await outbox.get(delivery.id))?.state ?? "missing";
  };

  const guarded = async <T>(work: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      // The store's outage is no bug: one warning, no stack; the next look comes at its time.
      if (error instanceof StoreUnavailableError) logOutage(log, error, { during: "outbox" });
      else logEvent(log, { level: "error", message: "outbox error", ...describeError(error) });
      return fallback;
    }
  };

  /**
   * Delivers what is due in one lane, a batch at a time, until nothing due moves. A queue
   * whose head finished has its next one indexed behind the other queues' heads: they take
   * turns. Reads only the due index, never what is finished or waits behind a head.
   */
  const drain = async (lane: Lane) => {
    while (!halted) {
      const due = await outbox.due(lane, DUE_BATCH);
      let moved = false;
      await _eachAtMost(due, LANE_WIDTH[lane], async (item) => {
        if (!halted && (await claimAndDeliver(item)) !== null) moved = true;
      });
      // Nothing due, or all of it held by other senders: look again when the index says.
      if (!moved) return;
    }
  };

  const tick = (lane: Lane) => {
    const loop = loops[lane];
    loop.timer = null;
    loop.timerAt = Infinity;
    loop.running = (async () => {
      await guarded(() => drain(lane), undefined);
      const next = looping ? await guarded(() => outbox.nextDueAt(lane), null) : null;
      // Never sooner than a second: a delivery another sender holds is due again only later.
      const delay = next === null ? POLL_MS : Math.min(Math.max(next - now(), 1000), POLL_MS);
      loop.running = null;
      if (looping) wakeAt(lane, now() + delay);
    })();
  };

  /** Brings a lane's next step forward to `at` (a retry just scheduled). */
  const wakeAt = (lane: Lane, at: number) => {
    const loop = loops[lane];
    // A step due now runs now, even ahead of a timer set for that moment (the clock moved on).
    if (!looping || loop.running !== null || (at >= loop.timerAt && at > now())) return;
    if (loop.timer !== null) clearTimeout(loop.timer);
    loop.timerAt = at;
    loop.timer = setTimeout(() => tick(lane), Math.max(at - now(), 0));
  };

  return {
    deliverNow: (recorded) => guarded(() => deliverClaimed(recorded), "pending"),
    deliverDue: () => guarded(() => Promise.all(LANES.map(drain)).then(() => {}), undefined),
    wake: () => LANES.forEach((lane) => wakeAt(lane, now())),
    async start() {
      if (looping) return;
      looping = true;
      halted = false;
      LANES.forEach(tick);
      await Promise.all(LANES.map((lane) => loops[lane].running));
    },
    async stop() {
      looping = false;
      halted = true;
      for (const loop of Object.values(loops)) {
        if (loop.timer !== null) clearTimeout(loop.timer);
        loop.timer = null;
        loop.timerAt = Infinity;
      }
      await Promise.all(LANES.map((lane) => loops[lane].running));
    },
  };
}

/** Runs `work` on every item, at most `width` at a time. */
async function _eachAtMost<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
