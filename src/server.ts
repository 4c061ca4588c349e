// The listeners. Deno.serve (2.9.6) can neither survive a failed accept (out of descriptors
// its accept loop rejects and the process exits), nor cap connections, nor time out a request
// that never completes or an idle keep-alive connection (issue 8). So connections are accepted
// here, counted and timed by a ConnectionPool, and each is handed to the HTTP engine behind
// the runtime's per-connection HTTP engine (src/runtime/): on Deno the one behind Deno.serve
// (hyper), the same parser and cost per request; on Node.js one node:http server fed the sockets.
import type { Config } from "./config/config.ts";
import { clientAddress } from "./http/client_address.ts";
import { ConnectionPool, PooledConnection } from "./http/connection_pool.ts";
import type { Handler } from "./http/handler.ts";
import { logEvent, type LogSink } from "./http/request_log.ts";
import { runtime } from "./runtime/current.ts";
import type { NetAddress, ServeOnConnection, TcpConn, TcpListener } from "./runtime/runtime.ts";
import { StartupError } from "./startup_error.ts";

export interface RunningServer {
  /** The bound addresses, with the real port when 0 was asked for (once `bound` resolved). */
  readonly addresses: readonly NetAddress[];
  /**
   * Resolves once every address is bound; rejects with a ListenError naming the one that cannot
   * be, as `serve` throws it where the runtime binds at once (Deno).
   */
  readonly bound: Promise<void>;
  /**
   * Stops accepting, closes connections waiting for a request, lets requests in flight finish
   * for `shutdownGraceMs`, then closes what is left; resolves when every connection is closed.
   */
  shutdown(): Promise<void>;
}

export type ServeConfig = Pick<
  Config,
  | "listen"
  | "listenSettings"
  | "trustProxy"
  | "maxConnections"
  | "readTimeoutMs"
  | "idleTimeoutMs"
  | "shutdownGraceMs"
>;

/**
 * The methods whose requests the engine gives no body (`request.body` is null). Asked of the
 * method because reading `request.body` turns the body the engine already holds into a stream
 * that the handler then reads back; without that detour a small MCP request takes 0.86–0.92× the
 * CPU (Deno 2.9.6).
 */
const BODILESS_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "CONNECT"]);

/** The longest pause between accept attempts while they fail. */
const MAX_ACCEPT_PAUSE_MS = 1000;

/** The runtime's per-connection server; null where it has none (a future Deno). */
export function connectionServer(): ServeOnConnection | null {
  return runtime.serveOnConnection;
}

/** Binds every listen address to the one handler; sites are told apart by Host. */
export function serve(
  config: ServeConfig,
  handler: Handler,
  log: LogSink,
  options: { readonly now?: () => number; readonly serveOnConnection?: ServeOnConnection | null } =
    {},
): RunningServer {
  const serveOnConnection = options.serveOnConnection === undefined
    ? connectionServer()
    : options.serveOnConnection;
  if (serveOnConnection === null) {
    logEvent(log, {
      level: "warn",
      message: "this Deno has no per-connection server: no connection cap and no deadlines",
      runtime: runtime.description,
    });
    return _plainServe(config, handler);
  }
  const pool = new ConnectionPool<_Connection>(config, options.now ?? Date.now);
  const served = new Set<Promise<void>>();
  let stopping = false;
  const onError = () => new Response(null, { status: 500 });

  const onConnection = (conn: TcpConn) => {
    const connection = new _Connection();
    if (stopping || !pool.admit(connection)) return conn.close();
    conn.setNoDelay(true);
    const peer = conn.remoteAddr;
    const answered = () => {
      // While stopping, the answer said `Connection: close`, so the engine closes it once sent;
      // aborting here could cut the answer's last bytes.
      if (--connection.inFlight === 0 && !stopping) pool.idle(connection);
    };
    const send = (response: Response) => stopping ? _closingConnection(response) : response;
    // Runs before the engine has the answer, so before `answered`.
    const sendRead = (response: Response) => {
      pool.busy(connection);
      return send(response);
    };
    const { finished } = serveOnConnection(
      conn,
      connection.signal,
      (request, info) => {
        connection.inFlight++;
        info.completed.then(answered, answered);
        const context = new _LazyContext(request, peer, config.trustProxy, connection.signal);
        const answer = handler(request, context);
        if (BODILESS_METHODS.has(request.method)) {
          pool.busy(connection);
          return answer.then(send);
        }
        pool.reading(connection);
        return answer.then(sendRead);
      },
      onError,
      () => {},
    );
    const done = finished.catch(() => {}).finally(() => {
      connection.done = true;
      pool.release(connection);
      served.delete(done);
    });
    served.add(done);
  };

  const listeners = _listenAll(config);
  const accepting = listeners.map((listener) => _accept(listener, onConnection, pool, log));
  // Deadlines are checked together, often enough for them to hold to about a second.
  const sweep = Math.min(1000, config.readTimeoutMs / 2, config.idleTimeoutMs / 2);
  const sweeper = setInterval(() => pool.sweep(), sweep);
  const keepSocketErrors = runtime.dropVanishedSocketErrors();
  const bound = Promise.all(
    listeners.map((listener, i) =>
      listener.bound.catch((error) => {
        throw _listenError(config, i, error);
      })
    ),
  ).then(() => {});
  bound.catch(() => {}); // Reported by whoever awaits it.
  return {
    get addresses() {
      return listeners.map((l) => l.addr);
    },
    bound,
    async shutdown() {
      stopping = true;
      for (const listener of listeners) listener.close();
      await Promise.all(accepting);
      pool.closeWaiting();
      const grace = setTimeout(() => pool.closeAll(), config.shutdownGraceMs);
      await Promise.all(served);
      clearTimeout(grace);
      clearInterval(sweeper);
      keepSocketErrors();
    },
  };
}

/** The operator listener (VESTIBULE_ADMIN_LISTEN) on its own address, with the same protections. */
export function serveAdmin(
  config: ServeConfig & Pick<Config, "adminListen">,
  handler: Handler,
  log: LogSink,
): RunningServer {
  const listen = config.adminListen === null ? [] : [config.adminListen];
  return serve({ ...config, listen, listenSettings: ["VESTIBULE_ADMIN_LISTEN"] }, handler, log);
}

/** The answer with `Connection: close` (RFC 9112 section 9.6): the last on its connection. */
function _closingConnection(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.set("Connection", "close");
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** One accepted connection: closing it aborts the engine's work on it. */
class _Connection extends PooledConnection {
  readonly #abort = new AbortController();
  readonly signal = this.#abort.signal;
  /** Requests whose answer is not sent yet (one at a time on HTTP/1.1). */
  inFlight = 0;
  /** The engine is done with it (the peer closed, or it was aborted). */
  done = false;
  override close(why: string): void {
    if (!this.done) this.#abort.abort(why);
  }
}

/** An address that cannot be bound (in use, not resolvable, not permitted), in one line. */
export class ListenError extends StartupError {
  override name = "ListenError";
}

/** Binds every address, or none: on a failure the ones bound are closed again. */
function _listenAll(config: ServeConfig): TcpListener[] {
  const listeners: TcpListener[] = [];
  for (const [i, address] of config.listen.entries()) {
    try {
      listeners.push(runtime.listen(address.hostname, address.port));
    } catch (error) {
      for (const listener of listeners) listener.close();
      throw _listenError(config, i, error);
    }
  }
  return listeners;
}

function _listenError(config: ServeConfig, i: number, error: unknown): ListenError {
  const address = config.listen[i]!;
  const at = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  return new ListenError(
    `cannot listen on ${at}:${address.port} (${config.listenSettings[i]}): ${
      (error as Error).message
    }`,
  );
}

/**
 * Accepts until the listener is closed. A failed accept never ends the loop: out of
 * descriptors, the connection that has waited longest for a request is closed to make room;
 * when none is waiting, accepting pauses and retries, so the server serves again as soon as
 * descriptors free up. One log line per run of failures.
 */
async function _accept(
  listener: TcpListener,
  onConnection: (conn: TcpConn) => void,
  pool: ConnectionPool<_Connection>,
  log: LogSink,
): Promise<void> {
  // One that cannot bind is reported through `bound`, not as a failed accept.
  if (!await listener.bound.then(() => true, () => false)) return;
  let pause = 0;
  let failing = false;
  for (;;) {
    let conn: TcpConn;
    try {
      conn = await listener.accept();
    } catch (error) {
      if (runtime.isClosed(error)) return;
      if (!failing) {
        logEvent(log, { level: "error", message: "accept failed", error: String(error) });
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

/** The fallback: a plain server, without the pool's protections. */
function _plainServe(config: ServeConfig, handler: Handler): RunningServer {
  const servers = config.listen.map((address) =>
    runtime.servePlain(
      address.hostname,
      address.port,
      (request, peer) =>
        handler(request, new _LazyContext(request, peer, config.trustProxy, undefined)),
    )
  );
  return {
    addresses: servers.map((s) => s.addr),
    bound: Promise.resolve(),
    async shutdown() {
      // A plain server cannot close a connection in flight: past the grace, the process just ends.
      const grace = Promise.withResolvers<void>();
      const timer = setTimeout(grace.resolve, config.shutdownGraceMs);
      await Promise.race([Promise.all(servers.map((s) => s.shutdown())), grace.promise]);
      clearTimeout(timer);
    },
  };
}

/**
 * The client address, computed on first use: most routes (every public read) never look at it.
 * A class, because an object literal with a getter gets a hidden class of its own per request:
 * that doubled the heap and halved the MCP endpoint's requests/s (bench mcp).
 */
class _LazyContext {
  route: string | undefined = undefined;
  readonly ended: AbortSignal | undefined;
  #address: string | undefined;
  readonly #request: Request;
  readonly #peer: NetAddress;
  readonly #trustProxy: boolean;
  constructor(
    request: Request,
    peer: NetAddress,
    trustProxy: boolean,
    ended: AbortSignal | undefined,
  ) {
    this.#request = request;
    this.#peer = peer;
    this.#trustProxy = trustProxy;
    this.ended = ended;
  }
  get clientAddress(): string {
    return this.#address ??= clientAddress(this.#request, this.#peer, this.#trustProxy);
  }
}
