// A small HTTP/1.1 client for the gateway's upstream calls: the part of fetch that
// http_transport.ts uses, over keep-alive connections of our own, at a fraction of fetch's CPU
// per call. Deliberately without proxies, redirects (the transport posts to the operator's URL
// and nowhere else), compression (it asks for `identity`, so Content-Length bounds the body)
// and HTTP/2.
export interface Http1FetchOptions {
  /** Idle connections kept per origin (scheme, host and port); 64 by default. */
  readonly maxIdlePerOrigin?: number;
  /** An idle connection is closed after this long; 4 s by default, under common servers' 5 s. */
  readonly idleTimeoutMs?: number;
  /** PEM certificates to trust for `https:` besides the system's (a private CA). */
  readonly caCerts?: readonly string[];
  /** A response's status line and headers may not exceed this; 64 KiB by default. */
  readonly maxHeadBytes?: number;
}

export interface Http1Init {
  readonly method: string;
  readonly headers: Headers | Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

export interface Http1Fetch {
  (url: string, init: Http1Init): Promise<Response>;
  /** Closes the idle connections and keeps none from now on. */
  close(): void;
}

/** Bodies up to this size are read before the answer resolves: one Response from bytes. */
const EAGER_BODY_BYTES = 65_536;
const READ_BYTES = 16_384;
const MAX_LINE_BYTES = 8_192;
/** Names a caller may not set: this client frames the message itself, as fetch does. */
const OWN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "accept-encoding",
  "te",
  "upgrade",
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\r\n\0]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");

export function createHttp1Fetch(options: Http1FetchOptions = {}): Http1Fetch {
  const maxIdle = options.maxIdlePerOrigin ?? 64;
  const idleMs = options.idleTimeoutMs ?? 4_000;
  const maxHead = options.maxHeadBytes ?? 65_536;
  const caCerts = options.caCerts ? [...options.caCerts] : undefined;
  const idle = new Map<string, _Wire[]>();
  let sweeper: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const sweep = () => {
    sweeper = null;
    const now = Date.now();
    for (const [origin, wires] of idle) {
      const fresh = wires.filter((wire) => now - wire.idleSince < idleMs || wire.close());
      if (fresh.length === 0) idle.delete(origin);
      else idle.set(origin, fresh);
    }
    if (idle.size > 0) schedule();
  };
  const schedule = () => {
    if (sweeper !== null) return;
    const timer = setTimeout(sweep, Math.max(idleMs / 4, 50));
    Deno.unrefTimer(timer);
    sweeper = timer;
  };

  const release = (wire: _Wire) => {
    const wires = idle.get(wire.origin) ?? [];
    if (closed || wires.length >= maxIdle) {
      wire.close();
      return;
    }
    wire.idleSince = Date.now();
    wire.reused = true;
    wires.push(wire);
    idle.set(wire.origin, wires);
    schedule();
  };

  const connect = async (target: URL, origin: string): Promise<_Wire> => {
    const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
    const tls = target.protocol === "https:";
    const port = Number(target.port) || (tls ? 443 : 80);
    try {
      if (tls) {
        const conn = await Deno.connectTls({
          hostname,
          port,
          alpnProtocols: ["http/1.1"],
          ...(caCerts ? { caCerts } : {}),
        });
        // A certificate refused is a connection failure, not a failed write.
        await conn.handshake();
        return new _Wire(conn, origin);
      }
      const conn = await Deno.connect({ hostname, port });
      conn.setNoDelay(true);
      return new _Wire(conn, origin);
    } catch (error) {
      throw new TypeError("fetch failed: could not connect", { cause: error });
    }
  };

  const fetch1 = (url: string, init: Http1Init): Promise<Response> => {
    const { signal } = init;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const target = new URL(url);
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      return Promise.reject(new TypeError(`fetch failed: ${target.protocol} is not http or https`));
    }
    const origin = `${target.protocol}//${target.host}`;
    const method = init.method.toUpperCase();
    let request: Uint8Array;
    try {
      request = _serialize(method, target, init.headers, init.body);
    } catch (error) {
      return Promise.reject(error);
    }

    return new Promise<Response>((resolve, reject) => {
      let wire: _Wire | null = null;
      let body: ReadableStreamDefaultController<Uint8Array> | null = null;
      const onAbort = () => {
        wire?.close();
        reject(signal!.reason);
        try {
          body?.error(signal!.reason);
        } catch {
          // Already closed or errored.
        }
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = (reuse: boolean) => {
        signal?.removeEventListener("abort", onAbort);
        if (reuse && wire!.clean()) release(wire!);
        else wire!.close();
      };
      const failed = (error: unknown) => {
        signal?.removeEventListener("abort", onAbort);
        wire?.close();
        reject(signal?.aborted ? signal.reason : error);
      };

      const exchange = async (): Promise<Response> => {
        for (let attempt = 0;; attempt++) {
          wire = idle.get(origin)?.pop() ?? await connect(target, origin);
          if (signal?.aborted) throw signal.reason;
          try {
            await wire.write(request);
            return await wire.readAnswer(method, maxHead, (ended, reuse) => {
              if (ended) done(reuse);
            }, (controller) => body = controller);
          } catch (failure) {
            const error = _typed(failure);
            // A reused connection the server closed while idle never read our request: one
            // more try on a new connection. Anything after the answer began is no such case.
            if (!wire.reused || wire.answered || attempt > 0 || signal?.aborted) throw error;
            wire.close();
          }
        }
      };
      exchange().then(resolve, failed);
    });
  };

  return Object.assign(fetch1, {
    close() {
      closed = true;
      for (const wires of idle.values()) for (const wire of wires) wire.close();
      idle.clear();
      if (sweeper !== null) clearTimeout(sweeper);
      sweeper = null;
    },
  });
}

/** The request's head and body as one write. */
function _serialize(
  method: string,
  target: URL,
  headers: Headers | Readonly<Record<string, string>>,
  body: string | undefined,
): Uint8Array {
  if (!TOKEN.test(method)) throw new TypeError("fetch failed: the method is not a token");
  let head = `${method} ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n`;
  const entries = headers instanceof Headers ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    // The value is never quoted back: it may be the operator's credential.
    if (!TOKEN.test(name)) throw new TypeError("fetch failed: a header name is not a token");
    if (BAD_VALUE.test(value)) {
      throw new TypeError(`fetch failed: the ${name} header's value has a line break`);
    }
    if (!OWN_HEADERS.has(name.toLowerCase())) head += `${name}: ${value}\r\n`;
  }
  const bytes = body === undefined ? null : encoder.encode(body);
  if (bytes !== null || method === "POST" || method === "PUT" || method === "PATCH") {
    head += `Content-Length: ${bytes?.byteLength ?? 0}\r\n`;
  }
  head += "Accept-Encoding: identity\r\n\r\n";
  const headBytes = encoder.encode(head);
  if (bytes === null || bytes.byteLength === 0) return headBytes;
  const message = new Uint8Array(headBytes.byteLength + bytes.byteLength);
  message.set(headBytes);
  message.set(bytes, headBytes.byteLength);
  return message;
}

/** An I/O error as fetch reports it: a TypeError with the OS error as its cause. */
function _typed(error: unknown): unknown {
  return error instanceof TypeError || !(error instanceof Error)
    ? error
    : new TypeError("fetch failed: the connection broke", { cause: error });
}

const broke = (what: string) => new TypeError(`fetch failed: the connection ${what}`);

/** One connection with its read buffer. */
class _Wire {
  readonly conn: Deno.Conn;
  readonly origin: string;
  /** It served an answer before: a failure before the next answer may be an idle close. */
  reused = false;
  /** A byte of the current answer arrived. */
  answered = false;
  idleSince = 0;
  #buffer = new Uint8Array(READ_BYTES);
  #start = 0;
  #end = 0;
  #closed = false;

  constructor(conn: Deno.Conn, origin: string) {
    this.conn = conn;
    this.origin = origin;
  }

  /** Closes it once; false, so that `filter` drops it. */
  close(): false {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.conn.close();
      } catch {
        // Closed by the peer's reset already.
      }
    }
    return false;
  }

  /** Nothing read past the answer: the next answer starts on a clean buffer. */
  clean(): boolean {
    return !this.#closed && this.#start === this.#end;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.answered = false;
    for (let offset = 0; offset < bytes.byteLength;) {
      offset += await this.conn.write(bytes.subarray(offset));
    }
  }

  /** More bytes into the buffer; false at the end of the stream. */
  async #fill(): Promise<boolean> {
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
    const read = await this.conn.read(this.#buffer.subarray(this.#end));
    if (read === null) return false;
    this.answered = true;
    this.#end += read;
    return true;
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

  /** Up to `max` bytes of the body, as they come; null at the end of the stream. */
  async #some(max: number): Promise<Uint8Array | null> {
    if (this.#start < this.#end) {
      const size = Math.min(max, this.#end - this.#start);
      const bytes = this.#buffer.slice(this.#start, this.#start + size);
      this.#start += size;
      return bytes;
    }
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
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(":");
        if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
          throw new TypeError("fetch failed: the answer has a malformed header line");
        }
        headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
      }
      const connection = headers.get("Connection")?.toLowerCase() ?? "";
      const keepAlive = status[1] === "1" && !/(^|,)\s*close\s*(,|$)/.test(connection);
      const encoding = headers.get("Content-Encoding");
      if (encoding !== null && encoding.toLowerCase() !== "identity") {
        throw new TypeError("fetch failed: the answer is compressed, which was not asked for");
      }
      const init = { status: code, statusText: _reason(status[3]), headers };

      if (method === "HEAD" || code === 204 || code === 304) {
        ended(true, keepAlive);
        return new Response(null, init);
      }
      const transfer = headers.get("Transfer-Encoding");
      const length = headers.get("Content-Length");
      if (transfer !== null) {
        if (transfer.trim().toLowerCase() !== "chunked") {
          throw new TypeError("fetch failed: the answer's transfer coding is not chunked");
        }
        // RFC 9112 §6.3: with both, the length is ignored and the connection not reused.
        return new Response(this.#chunked(keepAlive && length === null, ended, streaming), init);
      }
      if (length !== null) {
        const sizes = new Set(length.split(",").map((part) => part.trim()));
        const [only] = sizes;
        if (sizes.size !== 1 || !/^\d{1,15}$/.test(only!)) {
          throw new TypeError("fetch failed: the answer's Content-Length is invalid");
        }
        const size = Number(only);
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
          throw _typed(error);
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
            const part = await this.#some(left);
            if (part === null) throw broke("closed before the body ended");
            left -= part.byteLength;
            if (left === 0 && await line() !== "") {
              throw new TypeError("fetch failed: a chunk is longer than its size");
            }
            return part;
          }
          const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(await line());
          if (size === null) throw new TypeError("fetch failed: a chunk size is invalid");
          left = parseInt(size[1]!, 16);
          if (left === 0) {
            while (await line() !== "") {
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
