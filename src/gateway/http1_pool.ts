// The connections of the gateway's HTTP/1.1 client (http1.ts), per origin: at most
// `maxPerOrigin` open at once, busy or idle, whoever they serve; a request beyond that waits its
// turn (bounded by its own signal) rather than opening one more. Idle connections are kept per
// key (an origin, and for an upstream each person signs in to, that person: their connections
// never carry anyone else's requests), a few per key, for `idleMs`; an idle connection that
// receives anything at all is closed (http1_wire.ts).
import type { Wire } from "./http1_wire.ts";
import { runtime } from "../runtime/current.ts";

export interface PoolOptions {
  readonly maxPerOrigin: number;
  readonly maxIdlePerKey: number;
  readonly idleMs: number;
}

export interface Pool {
  /** A connection for `key`: an idle one, or a new one from `dial` once the origin has room. */
  acquire(
    origin: string,
    key: string,
    dial: () => Promise<Wire>,
    signal: AbortSignal | undefined,
  ): Promise<Wire>;
  /** Back after a whole answer: kept idle if nothing was read past it, else closed. */
  release(wire: Wire): void;
  /** Closed, and its place given to whoever waits. */
  discard(wire: Wire): void;
  /** Closes the idle connections and keeps none from now on. */
  close(): void;
}

/** What a waiting request is given: a connection, or room to open one (null). */
type Slot = Wire | null;

interface Waiter {
  readonly key: string;
  readonly grant: (slot: Slot) => void;
}

interface Origin {
  /** Connections open or being opened. */
  open: number;
  /** Oldest first. */
  readonly idle: Wire[];
  readonly waiting: Waiter[];
}

export function createPool(options: PoolOptions): Pool {
  const { maxPerOrigin, maxIdlePerKey, idleMs } = options;
  const origins = new Map<string, Origin>();
  let sweeper: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const originOf = (origin: string): Origin => {
    let place = origins.get(origin);
    if (place === undefined) {
      place = { open: 0, idle: [], waiting: [] };
      origins.set(origin, place);
    }
    return place;
  };

  /** A slot for `key` now, or undefined when the origin is full and busy. */
  const take = (place: Origin, key: string): Slot | undefined => {
    const mine = place.idle.findLastIndex((wire) => wire.key === key);
    if (mine >= 0) {
      // The newest idle one is the usual: popped, no array made for it.
      const wire = mine === place.idle.length - 1
        ? place.idle.pop()!
        : place.idle.splice(mine, 1)[0]!;
      wire.take();
      return wire;
    }
    if (place.open < maxPerOrigin) {
      place.open++;
      return null;
    }
    // Full, but someone else's connection is idle: its place serves this request instead.
    const other = place.idle.shift();
    if (other === undefined) return undefined;
    other.close();
    return null;
  };

  const pump = (place: Origin) => {
    for (let next = place.waiting[0]; next !== undefined; next = place.waiting[0]) {
      const slot = take(place, next.key);
      if (slot === undefined) return;
      place.waiting.shift();
      next.grant(slot);
    }
  };

  const discard = (wire: Wire) => {
    const place = origins.get(wire.origin);
    if (place === undefined) return;
    const at = place.idle.indexOf(wire);
    if (at >= 0) place.idle.splice(at, 1);
    if (!wire.close()) return;
    place.open--;
    pump(place);
    if (place.open === 0 && place.waiting.length === 0) origins.delete(wire.origin);
  };

  const sweep = () => {
    sweeper = null;
    const now = Date.now();
    for (const place of [...origins.values()]) {
      for (const wire of place.idle.filter((wire) => now - wire.idleSince >= idleMs)) {
        discard(wire);
      }
    }
    if ([...origins.values()].some((place) => place.idle.length > 0)) schedule();
  };
  const schedule = () => {
    if (sweeper !== null) return;
    const timer = setTimeout(sweep, Math.max(idleMs / 4, 50));
    runtime.unrefTimer(timer);
    sweeper = timer;
  };

  const wait = (place: Origin, key: string, signal: AbortSignal | undefined) =>
    new Promise<Slot>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const abort = () => {
        const at = place.waiting.indexOf(waiter);
        if (at >= 0) place.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        key,
        grant: (slot) => {
          signal?.removeEventListener("abort", abort);
          resolve(slot);
        },
      };
      signal?.addEventListener("abort", abort, { once: true });
      place.waiting.push(waiter);
    });

  return {
    async acquire(origin, key, dial, signal) {
      const place = originOf(origin);
      // First come, first served: with others waiting, there is no room for this one either.
      const now = place.waiting.length === 0 ? take(place, key) : undefined;
      const slot = now === undefined ? await wait(place, key, signal) : now;
      if (slot !== null) return slot;
      try {
        if (signal?.aborted) throw signal.reason;
        return await dial();
      } catch (error) {
        place.open--;
        pump(place);
        throw error;
      }
    },

    release(wire) {
      const place = origins.get(wire.origin);
      const kept = place === undefined ? Infinity : _kept(place.idle, wire.key);
      if (closed || !wire.clean() || kept >= maxIdlePerKey) return discard(wire);
      wire.reused = true;
      wire.idleSince = Date.now();
      place!.idle.push(wire);
      wire.idle(() => discard(wire));
      pump(place!);
      schedule();
    },

    discard,

    close() {
      closed = true;
      for (const place of origins.values()) {
        for (const wire of [...place.idle]) discard(wire);
      }
      if (sweeper !== null) clearTimeout(sweeper);
      sweeper = null;
    },
  };
}

/** How many of `idle` are `key`'s (counted, not filtered: a release is once per request). */
function _kept(idle: readonly Wire[], key: string): number {
  let kept = 0;
  for (const wire of idle) if (wire.key === key) kept++;
  return kept;
}
