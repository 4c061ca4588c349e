// What Vestibule needs of its runtime beyond web standards (Request, Response, fetch, streams,
// Web Crypto, URL): one interface, a Deno and a Node.js implementation, picked in current.ts.

/** A TCP peer or bound address. */
export interface NetAddress {
  readonly transport: "tcp" | "udp";
  readonly hostname: string;
  readonly port: number;
}

/** An accepted TCP connection, as the listeners' connection pool handles it. */
export interface TcpConn {
  readonly remoteAddr: NetAddress;
  setNoDelay(noDelay: boolean): void;
  close(): void;
}

export interface TcpListener {
  /** The bound address (with the real port once `bound` has resolved). */
  readonly addr: NetAddress;
  /** Resolves once bound, or rejects with why it cannot be (Node.js binds asynchronously). */
  readonly bound: Promise<void>;
  /** The next connection; rejects with an error `isClosed` knows once the listener is closed. */
  accept(): Promise<TcpConn>;
  close(): void;
}

/** Settles once the answer to one request has been sent (or the connection went away). */
export interface ConnectionRequestInfo {
  readonly completed: Promise<void>;
}

/**
 * Serves HTTP/1.1 on one accepted connection until it closes or `signal` aborts; aborting
 * closes the socket at once.
 */
export type ServeOnConnection = (
  conn: TcpConn,
  signal: AbortSignal,
  handler: (request: Request, info: ConnectionRequestInfo) => Promise<Response>,
  onError: (error: unknown) => Response,
  onListen: () => void,
) => { readonly finished: Promise<void> };

/** An outgoing TCP (or TLS) connection, read and written like Deno.Conn. */
export interface Conn {
  /** Bytes read into `buffer`, or null at the end of the stream. */
  read(buffer: Uint8Array): Promise<number | null>;
  /** Bytes written (perhaps fewer than given). */
  write(bytes: Uint8Array): Promise<number>;
  close(): void;
}

export interface ConnectOptions {
  readonly hostname: string;
  readonly port: number;
  /** TLS with ALPN http/1.1; `caCerts` (PEM) replace the system's roots when given. */
  readonly tls?: { readonly caCerts?: readonly string[] };
}

/** A child process with piped standard streams. */
export interface ChildProcess {
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  readonly status: Promise<{ readonly code: number; readonly signal: string | null }>;
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

export interface SpawnOptions {
  readonly args: readonly string[];
  /** The child's whole environment: nothing of this process's is passed on. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export type SignalName = "SIGINT" | "SIGTERM" | "SIGHUP";

export interface WriteOptions {
  readonly append?: boolean;
  readonly createNew?: boolean;
  readonly mode?: number;
}

export interface Runtime {
  /** "Deno 2.9.6", "Node.js 24.1.0": for start-up lines and the doctor. */
  readonly description: string;
  /** The command-line arguments after the script. */
  readonly args: readonly string[];
  /** One environment variable; undefined when unset. */
  env(name: string): string | undefined;
  /** Every variable's name, or null when this process may not list them. */
  envNames(): string[] | null;
  exit(code: number): never;
  /** Standard output, written synchronously. */
  readonly stdout: { writeSync(bytes: Uint8Array): number };
  stdin(): ReadableStream<Uint8Array>;
  onSignal(signal: SignalName, listener: () => void): void;
  /** Runs `listener` before the process ends: on exit, an uncaught error or rejection. */
  beforeExit(listener: () => void): void;
  readTextFile(path: string | URL): Promise<string>;
  writeTextFile(path: string | URL, text: string, options?: WriteOptions): Promise<void>;
  mkdir(path: string, options: { recursive: boolean; mode: number }): Promise<void>;
  /** Creates `path` with `mode` when missing (never truncating it); returns its mode. */
  touch(path: string, mode: number): Promise<number | null>;
  /** The file's mode (null where the system has none); rejects when it does not exist. */
  fileMode(path: string): Promise<number | null>;
  /** The file (or directory) does not exist. */
  isNotFound(error: unknown): boolean;
  /** The runtime's permissions refused the operation. */
  isNotPermitted(error: unknown): boolean;
  /** The reader at the other end of a pipe is gone. */
  isBrokenPipe(error: unknown): boolean;
  /** A listener or connection that was closed (the end of an accept loop). */
  isClosed(error: unknown): boolean;
  /** Whether this process was granted `name` access to `path` (Deno --allow-*, Node --permission). */
  isGranted(name: "read" | "write", path: string): boolean;
  /** Resident memory in bytes. */
  rss(): number;
  listen(hostname: string, port: number): TcpListener;
  /** Connects, and with `tls` completes the handshake (a refused certificate rejects here). */
  connect(options: ConnectOptions): Promise<Conn>;
  /** Starts a child; throws at once when its command is missing or may not be run. */
  spawn(command: string, options: SpawnOptions): ChildProcess;
  /** The addresses of `host`; the lookup ends when `signal` aborts. */
  resolveDns(host: string, type: "A" | "AAAA", signal: AbortSignal): Promise<string[]>;
  /** Lets the process end while `timer` is still pending. */
  unrefTimer(timer: ReturnType<typeof setTimeout>): void;
  /** The per-connection HTTP server, or null when this runtime lacks it (then `servePlain`). */
  readonly serveOnConnection: ServeOnConnection | null;
  /** A plain server on one address: no connection cap, no deadlines, no closing in flight. */
  servePlain(
    hostname: string,
    port: number,
    handler: (request: Request, peer: NetAddress) => Promise<Response>,
  ): { readonly addr: NetAddress; shutdown(): Promise<void> };
  /**
   * While the server runs: a peer closing its connection in the very instant the pool closes it
   * must not end the process (Deno reports that from inside an event dispatch). Returns the undo.
   */
  dropVanishedSocketErrors(): () => void;
  /**
   * An npm package that is named nowhere Deno reads at start-up (src/tracing/packages.ts): on
   * Deno `npm:NAME@VERSION`, fetched on first use; on Node.js the bare name, from node_modules.
   */
  importPackage(name: string, version: string): Promise<unknown>;
  /** Deno KV's open, where the runtime has Deno KV. */
  readonly openKv: ((path: string) => Promise<Deno.Kv>) | null;
}
