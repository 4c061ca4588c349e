// The listeners. Deno.serve (2.9.6) can neither survive a failed accept (out of descriptors,
// its loop throws and the process exits), nor cap connections, nor time out a request that
// never completes or an idle keep-alive connection (issue 8), so connections are accepted here
// and HTTP/1.1 is spoken by src/http1/.
import type { Config, ListenAddress } from "./config.ts";
import { clientAddress } from "./http/client_address.ts";
import type { Handler } from "./http/handler.ts";
import type { LogSink } from "./http/request_log.ts";
import { PooledConnection, serveConnection } from "./http1/connection.ts";
import { ConnectionPool } from "./http1/connection_pool.ts";
import { HttpDate } from "./http1/response_writer.ts";

export interface RunningServer {
  /** The bound addresses, with the real port when 0 was asked for. */
  readonly addresses: readonly Deno.NetAddr[];
  /**
   * Stops accepting, closes connections waiting for a request, lets requests in flight finish,
   * and resolves when every connection is closed.
   */
  shutdown(): Promise<void>;
}

export type ServeConfig = Pick<
  Config,
  "listen" | "trustProxy" | "maxConnections" | "readTimeoutMs" | "idleTimeoutMs"
>;

/** The longest pause between accept attempts while they fail. */
const MAX_ACCEPT_PAUSE_MS = 1000;

/** Binds every listen address to the one handler; sites are told apart by Host. */
export function serve(
  config: ServeConfig,
  handler: Handler,
  log: LogSink,
  now: () => number = Date.now,
): RunningServer {
  const pool = new ConnectionPool<PooledConnection>(config, now);
  const date = new HttpDate(now);
  const connections = new Set<Promise<void>>();
  let stopping = false;
  const options = { pool, date, now, log, stopping: () => stopping };
  const onConnection = (conn: Deno.TcpConn) => {
    const connection = new PooledConnection(conn);
    if (stopping || !pool.admit(connection)) return connection.close();
    conn.setNoDelay(true);
    const peer = conn.remoteAddr;
    const served = serveConnection(connection, {
      ...options,
      handler: (request) => handler(request, new _LazyContext(request, peer, config.trustProxy)),
    });
    connections.add(served);
    served.finally(() => connections.delete(served));
  };
  const listeners = config.listen.map((address) => _listen(address));
  const accepting = listeners.map((listener) => _accept(listener, onConnection, pool, log));
  // Deadlines are checked together, often enough for them to hold to about a second.
  const sweep = Math.min(1000, config.readTimeoutMs / 2, config.idleTimeoutMs / 2);
  const sweeper = setInterval(() => pool.sweep(), sweep);
  return {
    addresses: listeners.map((l) => l.addr),
    async shutdown() {
      stopping = true;
      for (const listener of listeners) listener.close();
      await Promise.all(accepting);
      pool.closeWaiting();
      await Promise.all(connections);
      clearInterval(sweeper);
    },
  };
}

function _listen(address: ListenAddress): Deno.TcpListener {
  return Deno.listen({ hostname: address.hostname, port: address.port, transport: "tcp" });
}

/**
 * Accepts until the listener is closed. A failed accept never ends the loop: out of
 * descriptors, the connection that has waited longest for a request is closed to make room;
 * when none is waiting, accepting pauses and retries, so the server serves again as soon as
 * descriptors free up. One log line per run of failures.
 */
async function _accept(
  listener: Deno.TcpListener,
  onConnection: (conn: Deno.TcpConn) => void,
  pool: ConnectionPool<PooledConnection>,
  log: LogSink,
): Promise<void> {
  let pause = 0;
  let failing = false;
  for (;;) {
    let conn: Deno.TcpConn;
    try {
      conn = await listener.accept();
    } catch (error) {
      if (error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted) {
        return;
      }
      if (!failing) {
        log(JSON.stringify({ level: "error", message: "accept failed", error: String(error) }));
        failing = true;
      }
      const code = (error as { code?: string }).code;
      if ((code === "EMFILE" || code === "ENFILE") && pool.closeOldestWaiting()) continue;
      pause = Math.min(MAX_ACCEPT_PAUSE_MS, Math.max(10, pause * 2));
      await new Promise((resolve) => setTimeout(resolve, pause));
      continue;
    }
    pause = 0;
    failing = false;
    onConnection(conn);
  }
}

/**
 * The client address, computed on first use: most routes (every public read) never look at it.
 * A class, because an object literal with a getter gets a hidden class of its own per request:
 * that doubled the heap and halved the MCP endpoint's requests/s (bench mcp).
 */
class _LazyContext {
  #address: string | undefined;
  readonly #request: Request;
  readonly #peer: Deno.Addr;
  readonly #trustProxy: boolean;
  constructor(request: Request, peer: Deno.Addr, trustProxy: boolean) {
    this.#request = request;
    this.#peer = peer;
    this.#trustProxy = trustProxy;
  }
  get clientAddress(): string {
    return this.#address ??= clientAddress(this.#request, this.#peer, this.#trustProxy);
  }
}
