// One HTTP/1.1 connection (RFC 9112 §9): requests in turn, each read to its end before the
// next, the pool told at every step which deadline applies.
import { HttpError } from "../http/errors.ts";
import type { LogSink } from "../http/request_log.ts";
import { textResponse } from "../http/responses.ts";
import { ByteReader } from "./byte_reader.ts";
import type { Closable, ConnectionPool } from "./connection_pool.ts";
import { requestBody } from "./request_body.ts";
import { parseRequestHead, type RequestHead } from "./request_head.ts";
import { CONTINUE, type HttpDate, ResponseWriter, writeAll } from "./response_writer.ts";

export interface ConnectionOptions {
  readonly handler: (request: Request) => Promise<Response>;
  readonly pool: ConnectionPool<Closable>;
  readonly date: HttpDate;
  readonly now: () => number;
  /** True once the server shuts down: the request in flight is the connection's last. */
  readonly stopping: () => boolean;
  readonly log: LogSink;
}

/** A socket the pool may close from outside, at a deadline or to make room. */
export class PooledConnection implements Closable {
  readonly conn: Deno.Conn;
  #closed = false;

  constructor(conn: Deno.Conn) {
    this.conn = conn;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.conn.close();
  }
}

/** Fetch forbids these in a Request (Fetch §2.2.1); there is nothing to route them to. */
const _FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/** Serves requests until the peer leaves, a deadline passes, or one of them ends it. */
export async function serveConnection(
  connection: PooledConnection,
  options: ConnectionOptions,
): Promise<void> {
  const { pool } = options;
  const reader = new ByteReader(connection.conn);
  const writer = new ResponseWriter(connection.conn, options.date);
  try {
    for (let first = true;; first = false) {
      if (!first) {
        if (reader.available === 0) {
          pool.idle(connection);
          if (!(await reader.fill())) return;
        }
        pool.awaitHead(connection, options.now());
      }
      if (!(await _exchange(connection, reader, writer, options))) return;
    }
  } catch (error) {
    // A peer that goes away, or the pool closing the socket, is no news; anything else is a bug.
    if (!_IO_ERRORS.some((type) => error instanceof type)) {
      options.log(JSON.stringify({
        level: "error",
        message: "connection failed",
        error: error instanceof Error ? `${error.name}: ${error.message}` : "non-error thrown",
      }));
    }
  } finally {
    connection.close();
    pool.release(connection);
  }
}

const _IO_ERRORS = [
  Deno.errors.BadResource,
  Deno.errors.Interrupted,
  Deno.errors.ConnectionReset,
  Deno.errors.ConnectionAborted,
  Deno.errors.BrokenPipe,
  Deno.errors.NotConnected,
  Deno.errors.UnexpectedEof,
];

/** One request and its response; true when the connection may carry another. */
async function _exchange(
  connection: PooledConnection,
  reader: ByteReader,
  writer: ResponseWriter,
  options: ConnectionOptions,
): Promise<boolean> {
  const { conn } = connection;
  const { pool } = options;
  let head: RequestHead;
  /** As Fetch normalizes it: `get` is GET. */
  let method: string;
  try {
    const text = await reader.readHead();
    if (text === null) return false;
    head = parseRequestHead(text);
    method = head.method.toUpperCase();
    if (_FORBIDDEN_METHODS.has(method)) {
      throw new HttpError(501, `Method not implemented: ${head.method}`);
    }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    await _refuse(error, writer);
    return false;
  }
  const { framing, expectContinue } = head;
  let keepAlive = head.keepAlive;
  let complete = true;
  let body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>> | null = null;
  if (framing.kind !== "none") {
    if (method === "GET" || method === "HEAD") {
      // A Request of these methods cannot carry a body; it is left unread, so the connection ends.
      keepAlive = false;
    } else if (framing.kind === "length" && reader.available >= framing.length) {
      // Small bodies usually come with the head: no stream to set up (bench mcp).
      body = reader.take(framing.length);
    } else {
      complete = false;
      pool.awaitBody(connection);
      body = requestBody(reader, framing, {
        beforeRead: () => expectContinue ? writeAll(conn, CONTINUE) : Promise.resolve(),
        done: () => {
          complete = true;
          pool.busy(connection);
        },
      });
    }
  }
  if (complete) pool.busy(connection);
  let request: Request;
  try {
    request = new Request(head.url, { method: head.method, headers: head.fields, body });
  } catch {
    await _refuse(new HttpError(400, "Bad request: malformed request target"), writer);
    return false;
  }
  const response = await options.handler(request);
  return await writer.write(response, {
    head: method === "HEAD",
    // A body the handler did not read to its end would be taken for the next request.
    keepAlive: keepAlive && complete && !options.stopping(),
    chunked: head.minorVersion === 1,
  });
}

/** Refuses a request the handler never sees; the connection ends, as its framing is unsure. */
async function _refuse(error: HttpError, writer: ResponseWriter) {
  const response = textResponse(`${error.message}\n`, { status: error.status });
  await writer.write(response, { head: false, keepAlive: false, chunked: true });
}
