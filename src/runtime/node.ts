// The runtime on Node.js 24+. Listeners hand accepted sockets to one node:http server that never
// listens itself, so the connection pool in src/server.ts keeps its caps and deadlines here too.
import { mkdir, open, readFile, stat, writeFile } from "node:fs/promises";
import { writeSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { spawn } from "node:child_process";
import { Resolver } from "node:dns/promises";
import { connect as netConnect, createServer as createTcpServer, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import process from "node:process";
import { Readable, Writable } from "node:stream";
import { Gone, requestBody, toRequest } from "./node_request.ts";
import type {
  Conn,
  ConnectionRequestInfo,
  ConnectOptions,
  NetAddress,
  Runtime,
  ServeOnConnection,
  TcpConn,
  TcpListener,
} from "./runtime.ts";

const _SEA = "sea:/";
/** The executable's assets; node:sea is not known to Deno's type checker, hence no import. */
const _sea = process.getBuiltinModule("node:sea") as {
  getAsset(key: string, encoding: "utf8"): string;
};

class _ClosedError extends Error {
  override name = "ClosedError";
}

const _code = (error: unknown) => (error as { code?: unknown } | null)?.code;

/**
 * A write that waits while the reader is behind, as Deno's standard output does. Node.js leaves a
 * pipe or socket on fd 1 non-blocking, so a full one refuses the write (EAGAIN) where Deno's
 * blocks: the log line would be torn and the request that logged it answered 500.
 */
function _blockingWrite(fd: number): (bytes: Uint8Array) => number {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return (bytes) => {
    for (;;) {
      try {
        return writeSync(fd, bytes);
      } catch (error) {
        if (_code(error) !== "EAGAIN") throw error;
        Atomics.wait(pause, 0, 0, 1); // A millisecond for the reader; the event loop waits too.
      }
    }
  };
}

export const nodeRuntime: Runtime = {
  description: `Node.js ${process.versions.node}`,
  args: process.argv.slice(2),
  env: (name) => process.env[name],
  envNames: () => Object.keys(process.env),
  exit: (code) => process.exit(code),
  stdout: { writeSync: _blockingWrite(1) },
  stdin: () => Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  onSignal: (signal, listener) => void process.on(signal, listener),
  beforeExit(listener) {
    process.on("exit", listener);
    process.on("uncaughtExceptionMonitor", listener);
  },
  // In the single executable, modules and static/ are assets under sea:/ URLs (sea_main.cjs).
  readTextFile: async (path) =>
    String(path).startsWith(_SEA)
      ? _sea.getAsset(String(path).slice(_SEA.length), "utf8")
      : await readFile(path, "utf8"),
  async writeTextFile(path, text, options = {}) {
    const flag = options.createNew ? "wx" : options.append ? "a" : "w";
    await writeFile(path, text, {
      flag,
      ...(options.mode === undefined ? {} : { mode: options.mode }),
    });
  },
  mkdir: async (path, options) => void await mkdir(path, options),
  async touch(path, mode) {
    const file = await open(path, "a", mode);
    try {
      return (await file.stat()).mode;
    } finally {
      await file.close();
    }
  },
  fileMode: async (path) => (await stat(path)).mode,
  isNotFound: (error) => _code(error) === "ENOENT",
  isNotPermitted: (error) => _code(error) === "ERR_ACCESS_DENIED" || _code(error) === "EACCES",
  isBrokenPipe: (error) => _code(error) === "EPIPE",
  isClosed: (error) => error instanceof _ClosedError,
  isGranted(name, path) {
    // Without --permission, everything is granted (process.permission is then undefined).
    const permission = (process as { permission?: { has(scope: string, path: string): boolean } })
      .permission;
    return permission === undefined ||
      permission.has(name === "read" ? "fs.read" : "fs.write", path);
  },
  rss: () => process.memoryUsage.rss(),
  listen: _listen,
  connect: _connect,
  spawn(command, { args, env, cwd }) {
    const child = spawn(command, [...args], {
      env: { ...env },
      ...(cwd === undefined ? {} : { cwd }),
      stdio: "pipe",
    });
    // A command that cannot start has no pid at once; why (ENOENT) follows as an `error` event,
    // which would end the process unheard. Its exit is what `status` reports.
    child.on("error", () => {});
    if (child.pid === undefined) {
      throw Object.assign(new Error(`cannot start ${command}`), { code: "ENOENT" });
    }
    const status = new Promise<{ code: number; signal: string | null }>((resolve) =>
      child.once("close", (code, signal) => resolve({ code: code ?? 1, signal }))
    );
    return {
      stdin: Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      stdout: Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
      stderr: Readable.toWeb(child.stderr) as ReadableStream<Uint8Array>,
      status,
      kill: (signal) => void child.kill(signal),
    };
  },
  async resolveDns(host, type, signal) {
    const resolver = new Resolver();
    signal.addEventListener("abort", () => resolver.cancel(), { once: true });
    return type === "A" ? await resolver.resolve4(host) : await resolver.resolve6(host);
  },
  unrefTimer: (timer) => void (timer as unknown as { unref(): void }).unref(),
  serveOnConnection: _serveOnConnection(),
  servePlain() {
    throw new Error("Node.js serves every connection through the connection pool");
  },
  dropVanishedSocketErrors: () => () => {},
  // node_modules (package.json optionalDependencies); the single executable maps the name.
  importPackage: (name) => import(name),
  openKv: null,
};

/** A client connection read into the caller's buffer, as Deno.Conn reads. */
async function _connect(options: ConnectOptions): Promise<Conn> {
  const socket = options.tls === undefined
    ? netConnect({ host: options.hostname, port: options.port, noDelay: true })
    : tlsConnect({
      host: options.hostname,
      port: options.port,
      servername: options.hostname,
      ALPNProtocols: ["http/1.1"],
      ...(options.tls.caCerts ? { ca: [...options.tls.caCerts] } : {}),
    });
  await new Promise<void>((resolve, reject) => {
    socket.once(options.tls === undefined ? "connect" : "secureConnect", () => resolve());
    socket.once("error", reject);
  });
  const chunks: Uint8Array[] = [];
  let ended = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  socket.on("data", (chunk: Uint8Array) => {
    chunks.push(chunk);
    socket.pause();
    notify();
  });
  socket.on("end", () => {
    ended = true;
    notify();
  });
  socket.on("error", (error) => {
    failure = error;
    notify();
  });
  socket.on("close", () => {
    ended = true;
    notify();
  });
  return {
    async read(buffer) {
      while (chunks.length === 0) {
        if (failure !== null) throw failure;
        if (ended) return null;
        socket.resume();
        await new Promise<void>((resolve) => wake = resolve);
      }
      const chunk = chunks[0]!;
      const n = Math.min(chunk.length, buffer.length);
      buffer.set(chunk.subarray(0, n));
      if (n === chunk.length) chunks.shift();
      else chunks[0] = chunk.subarray(n);
      return n;
    },
    write(bytes) {
      if (failure !== null) return Promise.reject(failure);
      // Copied: the caller may reuse its buffer once the write resolves.
      return new Promise((resolve, reject) =>
        socket.write(bytes.slice(), (error) => error ? reject(error) : resolve(bytes.length))
      );
    },
    close: () => void socket.destroy(),
  };
}

class _NodeConn implements TcpConn {
  readonly socket: Socket;
  readonly remoteAddr: NetAddress;
  constructor(socket: Socket) {
    this.socket = socket;
    this.remoteAddr = {
      transport: "tcp",
      hostname: socket.remoteAddress ?? "",
      port: socket.remotePort ?? 0,
    };
  }
  setNoDelay(noDelay: boolean): void {
    this.socket.setNoDelay(noDelay);
  }
  close(): void {
    this.socket.destroy();
  }
}

/** Binds in the background: `bound` says when it has, or why it cannot (so does every accept). */
function _listen(hostname: string, port: number): TcpListener {
  const waiting: Socket[] = [];
  const takers: { resolve(conn: TcpConn): void; reject(error: unknown): void }[] = [];
  let failure: unknown = null;
  // Half-open allowed: a client that ends its side mid-body still hears why (_serveOnConnection).
  const server = createTcpServer(
    { pauseOnConnect: false, noDelay: true, allowHalfOpen: true },
    (socket) => {
      const taker = takers.shift();
      if (taker === undefined) waiting.push(socket);
      else taker.resolve(new _NodeConn(socket));
    },
  );
  const fail = (error: unknown) => {
    failure = error;
    for (const taker of takers.splice(0)) taker.reject(error);
  };
  server.on("error", fail);
  const bound = new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  bound.catch(() => {}); // Reported by whoever awaits it.
  server.listen({ host: hostname, port });
  return {
    bound,
    get addr(): NetAddress {
      const bound = server.address();
      return typeof bound === "object" && bound !== null
        ? { transport: "tcp", hostname: bound.address, port: bound.port }
        : { transport: "tcp", hostname, port };
    },
    accept() {
      if (failure !== null) return Promise.reject(failure);
      const socket = waiting.shift();
      if (socket !== undefined) return Promise.resolve(new _NodeConn(socket));
      return new Promise((resolve, reject) => takers.push({ resolve, reject }));
    },
    close() {
      server.close();
      for (const socket of waiting.splice(0)) socket.destroy();
      fail(new _ClosedError("listener closed"));
    },
  };
}

interface _Serving {
  readonly handler: (request: Request, info: ConnectionRequestInfo) => Promise<Response>;
  readonly onError: (error: unknown) => Response;
  readonly signal: AbortSignal;
}

/** One node:http server for every connection; what each connection serves is kept per socket. */
function _serveOnConnection(): ServeOnConnection {
  const serving = new WeakMap<Socket, _Serving>();
  // Deadlines and the connection cap are the pool's; node:http's own timers are off.
  const http = createServer({ requestTimeout: 0, headersTimeout: 0, keepAliveTimeout: 0 });
  http.keepAliveTimeout = 0;
  // How to fail the body being read on each socket.
  const reading = new WeakMap<Socket, (error: Error) => void>();
  http.on("request", (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const entry = serving.get(incoming.socket);
    if (entry === undefined) return;
    const socket = incoming.socket;
    const body = requestBody(incoming);
    if (body !== null) {
      reading.set(socket, body.fail);
      incoming.once("end", () => reading.delete(socket));
    }
    void _answer(entry, incoming, outgoing, body?.stream ?? null);
  });
  http.on("clientError", (error: Error, socket: Socket) => {
    // A body cut short (the client ended its side, or sent a bad chunk): as on Deno, the body's
    // stream fails and the handler answers, rather than node:http's bare 400.
    const fail = reading.get(socket);
    if (fail !== undefined) return void fail(error);
    // Anything else the parser refuses gets node:http's own answer.
    if (socket.writable) socket.write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    socket.destroy();
  });
  return (conn, signal, handler, onError) => {
    const socket = (conn as _NodeConn).socket;
    serving.set(socket, { handler, onError, signal });
    const finished = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    signal.addEventListener("abort", () => {
      const fail = reading.get(socket);
      if (fail === undefined) return void socket.destroy();
      // A body still being read fails first, as on Deno: its handler's answer (a 400, logged)
      // is dropped and closes the socket (_answer); a second later it goes regardless.
      fail(new Error("the connection was closed"));
      setTimeout(() => socket.destroy(), 1000).unref();
    }, { once: true });
    http.emit("connection", socket);
    return { finished };
  };
}

async function _answer(
  entry: _Serving,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  body: ReadableStream<Uint8Array> | null,
) {
  const gone = new Gone(entry.signal);
  const completed = new Promise<void>((resolve) =>
    outgoing.once("close", () => {
      gone.settle(outgoing.writableFinished);
      resolve();
    })
  );
  let response: Response;
  try {
    response = await entry.handler(toRequest(incoming, body, gone), { completed });
  } catch (error) {
    response = entry.onError(error);
  }
  if (outgoing.destroyed || entry.signal.aborted) {
    outgoing.destroy();
    await response.body?.cancel().catch(() => {});
    return;
  }
  // Names and values in one flat list, as writeHead takes them.
  const headers: string[] = [];
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") headers.push(name, value);
  }
  for (const cookie of response.headers.getSetCookie()) headers.push("set-cookie", cookie);
  // Deno.serve states the length of a body made from memory, where node:http would send it
  // chunked; every answer but an event stream is made from memory (src/http/responses.ts), so it
  // is read whole and sent with its length, and a HEAD answer's fields match the GET's.
  if (
    response.body !== null && incoming.method !== "HEAD" &&
    !response.headers.has("Content-Length") &&
    !(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")
  ) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch {
      outgoing.destroy();
      return;
    }
    headers.push("content-length", String(bytes.byteLength));
    outgoing.writeHead(response.status, response.statusText || undefined, headers);
    outgoing.end(bytes);
    return;
  }
  // No body: its length is 0 (node:http would frame nothing as chunked on GET, and not on HEAD).
  const mayHaveBody = response.status !== 204 && response.status !== 304;
  if (response.body === null && mayHaveBody && !response.headers.has("Content-Length")) {
    headers.push("content-length", "0");
  }
  // An empty reason phrase lets node:http give the standard one, as Deno does.
  outgoing.writeHead(response.status, response.statusText || undefined, headers);
  if (response.body === null || incoming.method === "HEAD") {
    outgoing.end();
    return;
  }
  await _writeBody(response.body.getReader(), outgoing);
}

/**
 * Writes a body, holding each chunk until the stream says whether another follows: a body that
 * is already complete (built from bytes) ends before the next turn of the event loop, so its
 * last chunk goes out with the end of the answer in one socket write, not two. A live stream
 * (events as they come) waits at most that one turn per chunk.
 */
async function _writeBody(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  outgoing: ServerResponse,
): Promise<void> {
  try {
    let result = await reader.read();
    while (!result.done) {
      const chunk = result.value;
      const next = reader.read();
      const settled = await Promise.race([next, _nextTurn()]);
      if (settled?.done) {
        outgoing.end(chunk);
        return;
      }
      // Waits for the socket to drain, so a slow reader holds back a streamed answer.
      if (!outgoing.write(chunk)) {
        await new Promise((resolve) => {
          outgoing.once("drain", resolve);
          outgoing.once("close", resolve);
        });
      }
      if (outgoing.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
      result = await next;
    }
    outgoing.end();
  } catch {
    outgoing.destroy();
  }
}

let _turn: Promise<undefined> | null = null;

/** Settles on the next turn of the event loop; one timer shared by every answer of this turn. */
function _nextTurn(): Promise<undefined> {
  return _turn ??= new Promise((resolve) =>
    setImmediate(() => {
      _turn = null;
      resolve(undefined);
    })
  );
}
