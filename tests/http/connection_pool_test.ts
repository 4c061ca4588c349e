import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { fuzzRuns } from "../fuzz/fuzz_support.ts";
import { ConnectionPool, PooledConnection } from "../../src/http/connection_pool.ts";

class FakeConnection extends PooledConnection {
  closed = false;
  readonly name: string;
  constructor(name: string) {
    super();
    this.name = name;
  }
  override close() {
    this.closed = true;
  }
}

function setup(maxConnections = 3) {
  let clock = 1_000;
  const pool = new ConnectionPool<FakeConnection>(
    { maxConnections, readTimeoutMs: 10_000, idleTimeoutMs: 5_000 },
    () => clock,
  );
  const open = (name: string) => {
    const connection = new FakeConnection(name);
    return { connection, admitted: pool.admit(connection) };
  };
  return { pool, open, advance: (ms: number) => (clock += ms), now: () => clock };
}

const closed = (...connections: FakeConnection[]) =>
  connections.filter((c) => c.closed).map((c) => c.name);

Deno.test("at the cap, a new connection closes the one that has waited longest", () => {
  const { pool, open } = setup(3);
  const a = open("a").connection;
  const b = open("b").connection;
  const c = open("c").connection;
  pool.busy(a); // a's request is in: the handler runs
  const d = open("d");
  assert.equal(d.admitted, true);
  assert.deepEqual(closed(a, b, c), ["b"]);
  assert.equal(pool.size, 3);
  pool.idle(c); // c answered and waits again: now the newest waiting one
  open("e");
  assert.deepEqual(closed(a, b, c, d.connection), ["b", "d"]);
});

Deno.test("with every connection busy, a new one is refused and nothing is closed", () => {
  const { pool, open } = setup(2);
  const a = open("a").connection;
  const b = open("b").connection;
  pool.busy(a);
  pool.reading(b); // reading a body: not waiting, not closed to make room
  const c = open("c");
  assert.equal(c.admitted, false);
  assert.deepEqual(closed(a, b), []);
  assert.equal(pool.closeOldestWaiting(), false);
  pool.release(a);
  assert.equal(open("d").admitted, true);
});

Deno.test("deadlines: the read deadline covers the first head and a body, the idle one keep-alive", () => {
  const { pool, open, advance } = setup(10);
  const head = open("head").connection; // accepted at 1000, no head by 11000
  const body = open("body").connection;
  advance(2_000);
  pool.reading(body); // a request with a body at 3000: body and answer by 13000
  const busy = open("busy").connection;
  pool.busy(busy);
  const idle = open("idle").connection;
  pool.busy(idle);
  advance(4_000);
  pool.idle(idle); // answered at 7000: its next head by 12000
  advance(3_999); // 10999
  pool.sweep();
  assert.deepEqual(closed(head, body, busy, idle), []);
  advance(1); // 11000
  pool.sweep();
  assert.deepEqual(closed(head, body, busy, idle), ["head"]);
  advance(1_000); // 12000
  pool.sweep();
  assert.deepEqual(closed(head, body, busy, idle), ["head", "idle"]);
  advance(1_000); // 13000
  pool.sweep();
  assert.deepEqual(closed(head, body, busy, idle), ["head", "body", "idle"]);
  advance(60_000);
  pool.sweep();
  assert.equal(pool.size, 1, "only the busy connection is left");
});

Deno.test("shutdown closes the waiting connections and leaves requests in flight", () => {
  const { pool, open } = setup(10);
  const waiting = open("waiting").connection;
  const reading = open("reading").connection;
  pool.reading(reading);
  const busy = open("busy").connection;
  pool.busy(busy);
  const idle = open("idle").connection;
  pool.idle(idle);
  pool.closeWaiting();
  assert.deepEqual(closed(waiting, reading, busy, idle), ["waiting", "idle"]);
  pool.release(waiting); // the connection's own loop forgets it again: harmless
  assert.equal(pool.size, 2);
});

Deno.test("a connection released while its answer goes out is not brought back by its end", () => {
  const { pool, open } = setup(1);
  const a = open("a").connection;
  pool.reading(a);
  pool.release(a); // the peer went away before the answer was sent
  pool.busy(a);
  pool.idle(a); // the answer's end, reported late
  assert.equal(pool.size, 0);
  const b = open("b").connection;
  const c = open("c");
  assert.equal(c.admitted, true, "b, the one waiting, made room");
  assert.deepEqual(closed(a, b), ["b"]);
  assert.equal(pool.size, 1);
});

/**
 * The pool against a plain model of its rules (connections in arrays and maps, in the order
 * they started waiting), over random runs of every operation: the same admissions, the same
 * connections closed, in the same order.
 */
Deno.test("the pool follows the model of its rules over random runs", () => {
  const operation = fc.oneof(
    fc.constant({ op: "open" as const, target: 0 }),
    fc.record({
      op: fc.constantFrom("reading", "busy", "idle", "release"),
      target: fc.nat(),
    }),
    fc.constantFrom(
      { op: "closeOldestWaiting" as const, target: 0 },
      { op: "closeWaiting" as const, target: 0 },
      { op: "closeAll" as const, target: 0 },
    ),
    fc.record({ op: fc.constant("advance" as const), target: fc.integer({ min: 1, max: 12_000 }) }),
    fc.constant({ op: "sweep" as const, target: 0 }),
  );
  fc.assert(
    fc.property(fc.array(operation, { minLength: 20, maxLength: 60 }), (operations) => {
      const { pool, open, advance, now } = setup(4);
      const model = new PoolModel(4, now);
      const connections: FakeConnection[] = [];
      const closedOrder: string[] = [];
      for (const { op, target } of operations) {
        const connection = connections[target % Math.max(connections.length, 1)];
        if (op === "open") {
          const name = String(connections.length);
          const opened = open(name);
          const original = opened.connection.close.bind(opened.connection);
          opened.connection.close = () => {
            closedOrder.push(name);
            original();
            // As in the server, the connection's end reaches the pool again while it closes.
            pool.release(opened.connection);
          };
          connections.push(opened.connection);
          assert.equal(opened.admitted, model.admit(name));
        } else if (op === "advance") advance(target);
        else if (op === "sweep") {
          pool.sweep();
          model.sweep();
        } else if (op === "closeOldestWaiting") {
          assert.equal(pool.closeOldestWaiting(), model.closeOldestWaiting());
        } else if (op === "closeWaiting" || op === "closeAll") {
          pool[op]();
          model[op]();
        } else if (connection) {
          pool[op](connection);
          model[op](connection.name);
        }
        assert.deepEqual(closedOrder, model.closed);
        assert.equal(pool.size, model.open.size);
      }
    }),
    fuzzRuns(300),
  );
});

/** The rules, written the plain way: the waiting ones in an array, oldest first. */
class PoolModel {
  readonly open = new Set<string>();
  readonly closed: string[] = [];
  readonly #state = new Map<string, "waiting" | "reading" | "busy">();
  readonly #deadline = new Map<string, number>();
  #waiting: string[] = [];
  readonly cap: number;
  readonly now: () => number;
  constructor(cap: number, now: () => number) {
    this.cap = cap;
    this.now = now;
  }
  admit(name: string): boolean {
    if (this.open.size >= this.cap && !this.closeOldestWaiting()) return false;
    this.open.add(name);
    this.#wait(name, 10_000);
    return true;
  }
  reading(name: string) {
    if (!this.open.has(name)) return;
    this.#leave(name, "reading");
    this.#deadline.set(name, this.now() + 10_000);
  }
  busy(name: string) {
    if (this.open.has(name)) this.#leave(name, "busy");
  }
  idle(name: string) {
    if (this.open.has(name)) this.#wait(name, 5_000);
  }
  release(name: string) {
    if (!this.open.has(name)) return;
    this.#waiting = this.#waiting.filter((n) => n !== name);
    this.open.delete(name);
  }
  closeOldestWaiting(): boolean {
    const oldest = this.#waiting[0];
    if (oldest === undefined) return false;
    this.#close(oldest);
    return true;
  }
  closeWaiting() {
    while (this.closeOldestWaiting());
  }
  closeAll() {
    for (const name of [...this.open]) this.#close(name);
  }
  sweep() {
    for (const name of [...this.open]) {
      if (this.#state.get(name) !== "busy" && this.#deadline.get(name)! <= this.now()) {
        this.#close(name);
      }
    }
  }
  #wait(name: string, timeoutMs: number) {
    this.#leave(name, "waiting");
    this.#waiting.push(name);
    this.#deadline.set(name, this.now() + timeoutMs);
  }
  #leave(name: string, next: "waiting" | "reading" | "busy") {
    this.#waiting = this.#waiting.filter((n) => n !== name);
    this.#state.set(name, next);
  }
  #close(name: string) {
    this.release(name);
    this.closed.push(name);
  }
}
