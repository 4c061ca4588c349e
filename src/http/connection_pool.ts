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

export interface Closable {
  close(): void;
}

/**
 * A connection is waiting (for a request head: new, or idle between requests), reading (a
 * request with a body whose handler has not answered yet), or busy (an answer going out).
 * Waiting and reading ones are closed at their deadline by `sweep`; waiting ones, oldest first,
 * also make room when the cap is reached or descriptors run out. Busy ones are never closed
 * from here.
 */
export class ConnectionPool<C extends Closable> {
  readonly #limits: ConnectionLimits;
  readonly #now: () => number;
  readonly #open = new Set<C>();
  /** Deadlines, in the order the connections started waiting. */
  readonly #waiting = new Map<C, number>();
  readonly #reading = new Map<C, number>();

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
    this.#waiting.set(connection, this.#now() + this.#limits.readTimeoutMs);
    return true;
  }

  /** A request with a body is in: the body must follow, and the handler answer, in time. */
  reading(connection: C): void {
    this.#waiting.delete(connection);
    this.#reading.set(connection, this.#now() + this.#limits.readTimeoutMs);
  }

  /** The request is in and its answer is going out, without deadline. */
  busy(connection: C): void {
    this.#waiting.delete(connection);
    this.#reading.delete(connection);
  }

  /** Keep-alive between requests. */
  idle(connection: C): void {
    this.#reading.delete(connection);
    this.#waiting.delete(connection);
    this.#waiting.set(connection, this.#now() + this.#limits.idleTimeoutMs);
  }

  /** The connection is closed; forgetting it twice is harmless. */
  release(connection: C): void {
    this.busy(connection);
    this.#open.delete(connection);
  }

  /** Closes the connection that has waited longest; false when none is waiting. */
  closeOldestWaiting(): boolean {
    for (const connection of this.#waiting.keys()) {
      this.#close(connection);
      return true;
    }
    return false;
  }

  /** Closes every connection past its deadline. */
  sweep(): void {
    const now = this.#now();
    for (const deadlines of [this.#waiting, this.#reading]) {
      for (const [connection, deadline] of deadlines) {
        if (deadline <= now) this.#close(connection);
      }
    }
  }

  /** Shutdown: closes every waiting connection; the others finish their request first. */
  closeWaiting(): void {
    for (const connection of this.#waiting.keys()) this.#close(connection);
  }

  /** Shutdown, once the grace period is over: closes every connection, in flight or not. */
  closeAll(): void {
    for (const connection of this.#open) this.#close(connection);
  }

  #close(connection: C): void {
    this.release(connection);
    connection.close();
  }
}
