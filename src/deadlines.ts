/**
 * Deadlines of work in flight (a forwarded call's answer window, an upstream call's timeout),
 * kept by one timer: nearly every deadline is cleared long before it is due, and a timer of its
 * own per call (two a call, set and cleared) cost more than the call's routing. A deadline fires
 * in the first tick of RESOLUTION_MS at or after it is due: up to that much late, never early.
 * The timer keeps no process alive (the work it bounds does), so it is left armed when its
 * deadlines are cleared: it rings once for nothing rather than being set again for each call.
 */
import { runtime } from "./runtime/current.ts";

/** The grain of every deadline: how late one may fire. */
export const RESOLUTION_MS = 10;

export interface Deadline {
  /** It will not fire (nothing happens if it has). */
  clear(): void;
}

export interface Deadlines {
  /** Calls `fire` once, `ms` from now, unless cleared first. */
  after(ms: number, fire: () => void): Deadline;
}

/** What the deadlines need of the clock: the runtime's timers, or a test's. */
export interface TimerClock {
  now(): number;
  set(fire: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

const SYSTEM_CLOCK: TimerClock = {
  now: () => performance.now(),
  set(fire, ms) {
    const timer = setTimeout(fire, ms);
    runtime.unrefTimer(timer);
    return timer;
  },
  clear: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

export function createDeadlines(clock: TimerClock = SYSTEM_CLOCK): Deadlines {
  // Due deadlines by tick (RESOLUTION_MS since the clock's zero), and the one timer, armed for
  // the earliest tick that had deadlines when it was armed.
  const ticks = new Map<number, Set<() => void>>();
  let timer: unknown = null;
  let armedFor = Infinity;

  const arm = (tick: number) => {
    if (timer !== null) clock.clear(timer);
    armedFor = tick;
    timer = clock.set(ring, Math.max(tick * RESOLUTION_MS - clock.now(), 0));
  };
  const ring = () => {
    timer = null;
    armedFor = Infinity;
    const now = clock.now();
    let next = Infinity;
    for (const [tick, due] of ticks) {
      if (tick * RESOLUTION_MS <= now) {
        ticks.delete(tick);
        for (const fire of due) fire();
      } else if (tick < next) next = tick;
    }
    // A deadline set by one that fired is in `ticks` already, and armed for if it is earlier.
    if (next < armedFor) arm(next);
  };

  return {
    after(ms, fire) {
      const tick = Math.ceil((clock.now() + ms) / RESOLUTION_MS);
      let due = ticks.get(tick);
      if (due === undefined) ticks.set(tick, due = new Set());
      // One entry per deadline, even for the same function twice.
      const entry = () => fire();
      due.add(entry);
      if (tick < armedFor) arm(tick);
      return {
        // From its own set: one ringing now (out of `ticks` already) skips what is cleared.
        clear() {
          due.delete(entry);
          if (due.size === 0 && ticks.get(tick) === due) ticks.delete(tick);
        },
      };
    },
  };
}

/** The process's deadlines. */
export const deadlines: Deadlines = createDeadlines();
