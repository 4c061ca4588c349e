// One HTTP/1.1 connection of the gateway's client (http1.ts) with its read buffer: writes a
// request, reads the answer's head and frames its body (Content-Length, chunked, to the end), and
// while it waits idle in the pool (http1_pool.ts) keeps one read pending, so that a byte or an
// end of stream the server sends between answers is seen and the connection never reused.

import type { Conn } from "../runtime/runtime.ts";

/** Bodies up to this size are read before the answer resolves: one Response from bytes. */
const EAGER_BODY_BYTES = 65_536;
const READ_BYTES = 16_384;
const MAX_LINE_BYTES = 8_192;
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
const latin1 = new TextDecoder("latin1");
/** A chunk's size line (RFC 9112 §7.1), its extensions skipped. */
const CHUNK_SIZE = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/;
/** The header fields that say how the answer's body is framed and whether the connection stays. */
const FRAMING_FIELDS = [
  "connection",
  "content-encoding",
  "transfer-encoding",
  "content-length",
] as const;
type Framing = typeof FRAMING_FIELDS[number];
const FRAMING: ReadonlySet<string> = new Set(FRAMING_FIELDS);
const isFraming = (name: string): name is Framing => FRAMING.has(name);

/** An I/O error as fetch reports it: a TypeError with the OS error as its cause. */
export function typed(error: unknown): unknown {
  return error instanceof TypeError || !(error instanceof Error)
    ? error
    : new TypeError("fetch failed: the connection broke", { cause: error });
}

const broke = (what: string) => new TypeError(`fetch failed: the connection ${what}`);

/** One connection with its read buffer. */
export class Wire {
  readonly conn: Conn;
  readonly origin: string;
  /** The pool it is kept in between requests: its origin, and whose connections they are. */
  readonly key: string;
  /** It served an answer before: a failure before the next answer may be an idle close. */
  reused = false;
  /** A byte of the current answer arrived. */
  answered = false;
  idleSince = 0;
  #buffer = new Uint8Array(READ_BYTES);
  #start = 0;
  #end = 0;
  #closed = false;
  /** The read started while idle; the next answer's first bytes, once the wire is taken. */
  #pending: Promise<number | null> | null = null;
  #idle = false;

  constructor(conn: Conn, origin: string, key: string) {
    this.conn = conn;
    this.origin = origin;
    this.key = key;
  }

  /** Closes it; true if it was open until now. */
  close(): boolean {
    this.#idle = false;
    if (this.#closed) return false;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // Closed by the peer's reset already.
    }
    return true;
  }

  /** Nothing read past the answer: the next answer starts on a clean buffer. */
  clean(): boolean {
    return !this.#closed && this.#start === this.#end;
  }

  /**
   * Idle from now: one read waits on it, and whatever it gets before the wire is taken again (a
   * byte the server wrote after its answer, its end of stream, a reset) calls `stale`: what an
   * upstream writes between answers must never become the next caller's answer.
   */
  idle(stale: () => void): void {
    this.#idle = true;
    if (this.#pending !== null) return;
    this.#start = this.#end = 0;
    const pending = this.conn.read(this.#buffer);
    this.#pending = pending;
    const settled = () => this.#idle && stale();
    pending.then(settled, settled);
  }

  /** Taken from the pool for a request: what the pending read gets is now its answer. */
  take(): void {
    this.#idle = false;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.answered = false;
    for (let offset = 0; offset < bytes.byteLength;) {
      offset += await this.conn.write(offset === 0 ? bytes : bytes.subarray(offset));
    }
  }

  /** More bytes into the buffer; false at the end of the stream. */
  async #fill(): Promise<boolean> {
    const pending = this.#pending;
    this.#pending = null;
    // The idle read fills the buffer from 0, which was clean when it started.
    if (pending === null) this.#makeRoom();
    const read = await (pending ?? this.conn.read(this.#buffer.subarray(this.#end)));
    if (read === null) return false;
    this.answered = true;
    this.#end += read;
    return true;
  }

  #makeRoom(): void {
    if (this.#start > 0 && this.#start === this.#end) this.#start = this.#end = 0;
    if (this.#end === this.#buffer.byteLength) {
      const used = this.#end - this.#start;
      if (this.#start === 0 || used > this.#buffer.byteLength / 2) {
        // Callers refuse more than their limit before asking for more, so this stays bounded.
        const grown = new Uint8Array(this.#buffer.byteLength * 2);
        grown.set(this.#buffer.subarray(this.#start, this.#end));
        this.#buffer = grown;
      } else {
        this.#buffer.copyWithin(0, this.#start, this.#end);
      }
      this.#start = 0;
      this.#end = used;
    }
  }

  /** The bytes before the next CRLF (or CRLFCRLF with `blank`), consumed with it. */
  async #until(blank: boolean, limit: number, tooLong: string): Promise<string> {
    let from = this.#start;
    for (;;) {
      const at = _find(this.#buffer, from, this.#end, blank);
      if (at - this.#start > limit) throw new TypeError(`fetch failed: ${tooLong}`);
      if (at >= 0) {
        const text = latin1.decode(this.#buffer.subarray(this.#start, at));
        this.#start = at + (blank ? 4 : 2);
        return text;
      }
      if (this.#end - this.#start > limit) throw new TypeError(`fetch failed: ${tooLong}`);
      from = Math.max(this.#start, this.#end - 3);
      const offset = from - this.#start;
      if (!await this.#fill()) throw broke("closed before the answer ended");
      from = this.#start + offset;
    }
  }

  /**
   * The next line (not its CRLF) if the buffer holds all of it, consumed; else null, and #until
   * reads on. A chunked body's lines are in the buffer as a rule: no promise for them.
   */
  #bufferedLine(): string | null {
    const at = _find(this.#buffer, this.#start, this.#end, false);
    if (at < 0 || at - this.#start > MAX_LINE_BYTES) return null;
    const text = latin1.decode(this.#buffer.subarray(this.#start, at));
    this.#start = at + 2;
    return text;
  }

  /** Up to `max` bytes of the body from the buffer, or null if it holds none. */
  #buffered(max: number): Uint8Array | null {
    if (this.#start === this.#end) return null;
    const size = Math.min(max, this.#end - this.#start);
    const bytes = this.#buffer.slice(this.#start, this.#start + size);
    this.#start += size;
    return bytes;
  }

  /** Up to `max` bytes of the body, as they come; null at the end of the stream. */
  async #some(max: number): Promise<Uint8Array | null> {
    const buffered = this.#buffered(max);
    if (buffered !== null) return buffered;
    const bytes = new Uint8Array(Math.min(max, EAGER_BODY_BYTES));
    const read = await this.conn.read(bytes);
    if (read === null) return null;
    return bytes.subarray(0, read);
  }

  /** Exactly `size` bytes, read straight into their own buffer: never a byte past them. */
  async #exactly(size: number): Promise<Uint8Array<ArrayBuffer>> {
    const bytes = new Uint8Array(size);
    let got = Math.min(size, this.#end - this.#start);
    bytes.set(this.#buffer.subarray(this.#start, this.#start + got));
    this.#start += got;
    while (got < size) {
      const read = await this.conn.read(bytes.subarray(got));
      if (read === null) throw broke("closed before the body ended");
      got += read;
    }
    return bytes;
  }

  /**
   * Reads the answer's head (skipping 1xx) and returns its Response; `ended` hears when the
   * body was read to its end (`reuse`: the connection may serve another request) or broke off.
   */
  async readAnswer(
    method: string,
    maxHead: number,
    ended: (ended: boolean, reuse: boolean) => void,
    streaming: (controller: ReadableStreamDefaultController<Uint8Array>) => void,
  ): Promise<Response> {
    for (;;) {
      if (this.#start === this.#end && !await this.#fill()) {
        throw broke("closed before the answer began");
      }
      const head = await this.#until(true, maxHead, `the answer's head exceeds ${maxHead} bytes`);
      const lines = head.split("\r\n");
      const status = STATUS_LINE.exec(lines[0]!);
      if (status === null) throw new TypeError("fetch failed: the answer is not HTTP/1.x");
      const code = Number(status[2]);
      if (code === 101) throw new TypeError("fetch failed: the server switched protocols");
      if (code < 200) continue;
      const headers = new Headers();
      // The fields that frame the body, as Headers.get would give them (repeats joined), read
      // while the lines are: no lookups in the Headers afterwards.
      const framing: Partial<Record<Framing, string>> = {};
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(":");
        const name = line.slice(0, colon);
        if (colon <= 0 || !TOKEN.test(name)) {
          throw new TypeError("fetch failed: the answer has a malformed header line");
        }
        const value = line.slice(colon + 1).trim();
        headers.append(name, value);
        const lower = name.toLowerCase();
        if (isFraming(lower)) {
          const known = framing[lower];
          framing[lower] = known === undefined ? value : `${known}, ${value}`;
        }
      }
      const connection = framing["connection"]?.toLowerCase() ?? "";
      const keepAlive = status[1] === "1" && !/(^|,)\s*close\s*(,|$)/.test(connection);
      const encoding = framing["content-encoding"];
      if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
        throw new TypeError("fetch failed: the answer is compressed, which was not asked for");
      }
      const init = { status: code, statusText: _reason(status[3]), headers };

      if (method === "HEAD" || code === 204 || code === 304) {
        ended(true, keepAlive);
        return new Response(null, init);
      }
      const transfer = framing["transfer-encoding"] ?? null;
      const length = framing["content-length"] ?? null;
      if (transfer !== null) {
        if (transfer.trim().toLowerCase() !== "chunked") {
          throw new TypeError("fetch failed: the answer's transfer coding is not chunked");
        }
        // RFC 9112 §6.3: with both, the length is ignored and the connection not reused.
        return new Response(this.#chunked(keepAlive && length === null, ended, streaming), init);
      }
      if (length !== null) {
        const size = _contentLength(length);
        if (size <= EAGER_BODY_BYTES) {
          const bytes = await this.#exactly(size);
          ended(true, keepAlive);
          return new Response(bytes, init);
        }
        return new Response(this.#sized(size, keepAlive, ended, streaming), init);
      }
      return new Response(this.#toEnd(ended, streaming), init);
    }
  }

  #stream(
    next: () => Promise<Uint8Array | null>,
    ended: (ended: boolean, reuse: boolean) => void,
    streaming: (controller: ReadableStreamDefaultController<Uint8Array>) => void,
    reuse: boolean,
  ): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      start: streaming,
      pull: async (controller) => {
        let bytes: Uint8Array | null;
        try {
          bytes = await next();
        } catch (error) {
          ended(true, false);
          throw typed(error);
        }
        if (bytes === null) {
          ended(true, reuse);
          controller.close();
        } else {
          controller.enqueue(bytes);
        }
      },
      cancel: () => ended(true, false),
    }, { highWaterMark: 0 });
  }

  #sized(
    size: number,
    reuse: boolean,
    ended: (ended: boolean, reuse: boolean) => void,
    streaming: (controller: ReadableStreamDefaultController<Uint8Array>) => void,
  ): ReadableStream<Uint8Array> {
    let left = size;
    return this.#stream(
      async () => {
        if (left === 0) return null;
        const part = await this.#some(left);
        if (part === null) throw broke("closed before the body ended");
        left -= part.byteLength;
        return part;
      },
      ended,
      streaming,
      reuse,
    );
  }

  #toEnd(
    ended: (ended: boolean, reuse: boolean) => void,
    streaming: (controller: ReadableStreamDefaultController<Uint8Array>) => void,
  ): ReadableStream<Uint8Array> {
    return this.#stream(() => this.#some(READ_BYTES * 4), ended, streaming, false);
  }

  /** RFC 9112 §7.1: each chunk's data handed on as it arrives; extensions and trailers skipped. */
  #chunked(
    reuse: boolean,
    ended: (ended: boolean, reuse: boolean) => void,
    streaming: (controller: ReadableStreamDefaultController<Uint8Array>) => void,
  ): ReadableStream<Uint8Array> {
    let left = 0;
    let finished = false;
    const line = () => this.#until(false, MAX_LINE_BYTES, "a chunk line is too long");
    return this.#stream(
      async () => {
        for (;;) {
          if (finished) return null;
          if (left > 0) {
            const part = this.#buffered(left) ?? await this.#some(left);
            if (part === null) throw broke("closed before the body ended");
            left -= part.byteLength;
            if (left === 0 && (this.#bufferedLine() ?? await line()) !== "") {
              throw new TypeError("fetch failed: a chunk is longer than its size");
            }
            return part;
          }
          const size = CHUNK_SIZE.exec(this.#bufferedLine() ?? await line());
          if (size === null) throw new TypeError("fetch failed: a chunk size is invalid");
          left = parseInt(size[1]!, 16);
          if (left === 0) {
            while ((this.#bufferedLine() ?? await line()) !== "") {
              // A trailer field: not kept.
            }
            finished = true;
          }
        }
      },
      ended,
      streaming,
      reuse,
    );
  }
}

/**
 * A Content-Length's size: one number, or the same number repeated (RFC 9112 §6.3: a list of
 * identical values may be taken as one).
 */
function _contentLength(field: string): number {
  // The usual single value is taken as it is, without splitting it.
  const sizes = field.includes(",") ? new Set(field.split(",").map((part) => part.trim())) : null;
  const only = sizes === null ? field : [...sizes][0]!;
  if ((sizes !== null && sizes.size !== 1) || !/^\d{1,15}$/.test(only)) {
    throw new TypeError("fetch failed: the answer's Content-Length is invalid");
  }
  return Number(only);
}

/** Where CRLF (or CRLFCRLF) starts in `buffer[from, end)`, or -1. */
function _find(buffer: Uint8Array, from: number, end: number, blank: boolean): number {
  const need = blank ? 4 : 2;
  for (let i = buffer.indexOf(13, from); i >= 0 && i + need <= end; i = buffer.indexOf(13, i + 1)) {
    if (
      buffer[i + 1] === 10 && (!blank || (buffer[i + 2] === 13 && buffer[i + 3] === 10))
    ) return i;
  }
  return -1;
}

/** The reason phrase, if the Response constructor would take it. */
function _reason(text: string | undefined): string {
  return text !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(text) ? text : "";
}
