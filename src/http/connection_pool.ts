// Every open connection, with the deadline of the state it is in. The cap, not the operating
// system's descriptor limit, is what a flood of connections meets (issue 8).

export interface ConnectionLimits {
  /** Open connections at most; a new one beyond it first closes the oldest waiting one. */
  readonly maxConnections: number;
  /**
   * A new connection's first request head, and a request's body (until the handler answers),
   * must arrive within this many ms.
   */
  readonly readTimeoutMs: number;
  /** A connection waiting for its next request head is closed after this many ms. */
  readonly idleTimeoutMs: number;
}

/**
 * A connection as the pool keeps it. The pool's bookkeeping lives on the connection itself:
 * the state changes two or three times per request, and moving the connection between maps
 * on each change was measurable (with one promise reaction fewer in server.ts, 0.6 µs a
 * request less on /health and 0.9–1.2 µs on MCP tools/list, paired runs).
 */
export abstract class PooledConnection {
  /** Written by the pool only; `outside` until admitted and once released. */
  poolState: "outside" | "waiting" | "reading" | "busy" = "outside";
  /** When the state's deadline falls (waiting, reading). */
  poolDeadline = 0;
  /** The waiting connections, in the order they started waiting (a list through them). */
  poolPrevious: PooledConnection | null = null;
  poolNext: PooledConnection | null = null;
  /** Closes the connection, for the reason in words; the pool has already forgotten it. */
  abstract close(why: string): void;
}

/**
 * A connection is waiting (for a request head: new, or idle between requests), reading (a
 * request with a body whose handler has not answered yet), or busy (an answer going out).
 * Waiting and reading ones are closed at their deadline by `sweep`; waiting ones, oldest first,
 * also make room when the cap is reached or descriptors run out. Busy ones are never closed
 * from here. A change of state writes a few fields (the connection's, its neighbours' in the
 * waiting list), and making room takes the head of that list, so a flood of new connections at
 * the cap costs the same for each; only the sweep, at most once a second, walks them all.
 */
export class ConnectionPool<C extends PooledConnection> {
  readonly #limits: ConnectionLimits;
  readonly #now: () => number;
  readonly #open = new Set<C>();
  /** The connection that has waited longest, and the one that started waiting last. */
  #oldest: C | null = null;
  #newest: C | null = null;

  constructor(limits: ConnectionLimits, now: () => number) {
    this.#limits = limits;
    this.#now = now;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Takes a new connection, waiting for its first request; false when there is no room. */
  admit(connection: C): boolean {
    if (this.#open.size >= this.#limits.maxConnections && !this.closeOldestWaiting()) return false;
    this.#open.add(connection);
    this.#wait(connection, this.#limits.readTimeoutMs);
    return true;
  }

  /** A request with a body is in: the body must follow, and the handler answer, in time. */
  reading(connection: C): void {
    if (connection.poolState === "outside") return;
    this.#stopWaiting(connection);
    connection.poolState = "reading";
    connection.poolDeadline = this.#now() + this.#limits.readTimeoutMs;
  }

  /** The request is in and its answer is going out, without deadline. */
  busy(connection: C): void {
    if (connection.poolState === "outside") return;
    this.#stopWaiting(connection);
    connection.poolState = "busy";
  }

  /** Keep-alive between requests. */
  idle(connection: C): void {
    if (connection.poolState !== "outside") this.#wait(connection, this.#limits.idleTimeoutMs);
  }

  /** The connection is closed; forgetting it twice is harmless. */
  release(connection: C): void {
    this.#stopWaiting(connection);
    connection.poolState = "outside";
    this.#open.delete(connection);
  }

  /** Closes the connection that has waited longest; false when none is waiting. */
  closeOldestWaiting(): boolean {
    if (this.#oldest === null) return false;
    this.#close(this.#oldest, "room was needed for a new connection");
    return true;
  }

  /** Closes every connection past its deadline. */
  sweep(): void {
    const now = this.#now();
    for (const connection of this.#open) {
      if (connection.poolState !== "busy" && connection.poolDeadline <= now) {
        this.#close(
          connection,
          "the request was not read and answered within VESTIBULE_READ_TIMEOUT",
        );
      }
    }
  }

  /** Shutdown: closes every waiting connection; the others finish their request first. */
  closeWaiting(): void {
    while (this.closeOldestWaiting());
  }

  /** Shutdown, once the grace period is over: closes every connection, in flight or not. */
  closeAll(): void {
    for (const connection of this.#open) this.#close(connection, "the server is shutting down");
  }

  /** Into the waiting state, at the end of the waiting list. */
  #wait(connection: C, timeoutMs: number): void {
    this.#stopWaiting(connection);
    connection.poolState = "waiting";
    connection.poolDeadline = this.#now() + timeoutMs;
    connection.poolPrevious = this.#newest;
    if (this.#newest === null) this.#oldest = connection;
    else this.#newest.poolNext = connection;
    this.#newest = connection;
  }

  /** Out of the waiting list, if it is there. */
  #stopWaiting(connection: C): void {
    if (connection.poolState !== "waiting") return;
    const { poolPrevious: previous, poolNext: next } = connection;
    if (previous === null) this.#oldest = next as C | null;
    else previous.poolNext = next;
    if (next === null) this.#newest = previous as C | null;
    else next.poolPrevious = previous;
    connection.poolPrevious = connection.poolNext = null;
  }

  #close(connection: C, why: string): void {
    this.release(connection);
    connection.close(why);
  }
}
