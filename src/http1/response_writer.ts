// A fetch Response onto the wire as HTTP/1.1 (RFC 9112 §4, §6): the status line, the
// handler's fields, Date, and the framing: Content-Length for a body read whole, chunked
// coding for an event stream, which goes out event by event.

/** RFC 9110 §15 reason phrases of the statuses this server sends; any other goes without one. */
const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/** RFC 9110 §10.1.1: the interim answer to `Expect: 100-continue`. */
export const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

export interface WriteOptions {
  /** A HEAD request: the fields of the response, no content (RFC 9110 §9.3.2). */
  readonly head: boolean;
  /** False to end the connection after this response. */
  readonly keepAlive: boolean;
  /** HTTP/1.1 peer: a streamed body is chunked; an HTTP/1.0 one is delimited by closing. */
  readonly chunked: boolean;
}

/** RFC 9110 §6.6.1: an origin server with a clock MUST send Date; its text changes once a second. */
export class HttpDate {
  readonly #now: () => number;
  #second = -1;
  #text = "";

  constructor(now: () => number) {
    this.#now = now;
  }

  get text(): string {
    const now = this.#now();
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#text = new Date(now).toUTCString();
    }
    return this.#text;
  }
}

const _encoder = new TextEncoder();
const _CRLF = _encoder.encode("\r\n");
const _LAST_CHUNK = _encoder.encode("0\r\n\r\n");

/** One connection's responses, in turn, through one buffer: no allocation for a small one. */
export class ResponseWriter {
  readonly #conn: Pick<Deno.Conn, "write">;
  readonly #date: HttpDate;
  readonly #out = new Uint8Array(16 * 1024);

  constructor(conn: Pick<Deno.Conn, "write">, date: HttpDate) {
    this.#conn = conn;
    this.#date = date;
  }

  /** Writes the response; true when the connection may carry another request. */
  async write(response: Response, options: WriteOptions): Promise<boolean> {
    const status = response.status;
    let keepAlive = options.keepAlive;
    let fields = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\n`;
    let length: string | null = null;
    let dated = false;
    let eventStream = false;
    // forEach, not for…of: a sixth of the cost of iterating.
    response.headers.forEach((value, name) => {
      switch (name) {
        case "content-length":
          length = value;
          return;
        case "connection":
          // A handler may ask to close, e.g. after refusing a body it did not read (413).
          if (/(^|,)[ \t]*close[ \t]*(,|$)/i.test(value)) keepAlive = false;
          return;
        case "keep-alive":
        case "transfer-encoding":
          return;
        case "date":
          dated = true;
          break;
        case "content-type":
          eventStream = value.startsWith("text/event-stream");
      }
      fields += `${name}: ${value}\r\n`;
    });
    if (!dated) fields += `date: ${this.#date.text}\r\n`;
    // RFC 9110 §6.4.1: HEAD, 204 and 304 responses have no content; §8.6 allows the length.
    if (options.head || status === 204 || status === 304) {
      await response.body?.cancel();
      if (status === 204) length = null;
      await this.#send(_head(fields, length, keepAlive, false));
      return keepAlive;
    }
    // Only an event stream goes out as it is produced. Any other body is taken whole: that
    // gives its length, and skips the stream machinery, half the cost of writing it.
    const body = eventStream ? response.body : null;
    if (body === null) {
      const bytes = await response.bytes();
      await this.#send(_head(fields, String(bytes.byteLength), keepAlive, false), bytes);
      return keepAlive;
    }
    // Chunked coding (RFC 9112 §7.1); HTTP/1.0 has none, closing ends the body there (§6.3).
    if (!options.chunked) keepAlive = false;
    await this.#send(_head(fields, null, keepAlive, options.chunked));
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await this.#chunk(value, options.chunked);
      }
    } catch (error) {
      await reader.cancel().catch(() => {});
      throw error;
    }
    if (options.chunked) await writeAll(this.#conn, _LAST_CHUNK);
    return keepAlive;
  }

  async #chunk(value: unknown, chunked: boolean): Promise<void> {
    const bytes = _bytes(value);
    if (bytes.byteLength === 0) return;
    if (!chunked) return await writeAll(this.#conn, bytes);
    await this.#send(`${bytes.byteLength.toString(16)}\r\n`, bytes, _CRLF);
  }

  /** Text (a ByteString) and bytes in one write, through the buffer when they fit. */
  async #send(text: string, ...parts: Uint8Array[]): Promise<void> {
    const out = this.#out;
    const { read, written } = _encoder.encodeInto(text, out);
    let end = written;
    for (const part of parts) end += part.byteLength;
    // All ASCII (a byte a character, as UTF-8 too) and room for the rest: the common case.
    if (read === text.length && written === text.length && end <= out.length) {
      end = written;
      for (const part of parts) {
        out.set(part, end);
        end += part.byteLength;
      }
      return await writeAll(this.#conn, out.subarray(0, end));
    }
    // Header values are ByteStrings: a byte a character (ISO-8859-1), not UTF-8.
    await writeAll(this.#conn, Uint8Array.from(text, (c) => c.charCodeAt(0)));
    for (const part of parts) await writeAll(this.#conn, part);
  }
}

function _head(fields: string, length: string | null, keepAlive: boolean, chunked: boolean) {
  let head = fields;
  if (length !== null) head += `content-length: ${length}\r\n`;
  if (chunked) head += "transfer-encoding: chunked\r\n";
  if (!keepAlive) head += "connection: close\r\n";
  return head + "\r\n";
}

/** Fetch bodies are byte streams; anything else in one is the handler's bug. */
function _bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new TypeError("A response body chunk must be a Uint8Array");
}

export async function writeAll(conn: Pick<Deno.Conn, "write">, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.byteLength;) {
    written += await conn.write(bytes.subarray(written));
  }
}
