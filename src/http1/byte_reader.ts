import { HttpError } from "../http/errors.ts";

/** A request head (request line and fields) may be this long; beyond it the answer is 431. */
export const MAX_HEAD_BYTES = 16 * 1024;

const CR = 13;
const LF = 10;
const _ascii = new TextDecoder();

/**
 * A connection's bytes as they arrive: one buffer of MAX_HEAD_BYTES, filled at its tail and
 * consumed at its head, so a request head is found without copying and a pipelined request's
 * bytes wait for their turn.
 */
export class ByteReader {
  readonly #source: Pick<Deno.Conn, "read">;
  readonly #buffer = new Uint8Array(MAX_HEAD_BYTES);
  #start = 0;
  #end = 0;

  constructor(source: Pick<Deno.Conn, "read">) {
    this.#source = source;
  }

  /** Bytes read and not yet taken. */
  get available(): number {
    return this.#end - this.#start;
  }

  /** Reads what has arrived; false at the end of the stream. */
  async fill(): Promise<boolean> {
    if (this.#start > 0) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    const n = await this.#source.read(this.#buffer.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** Up to `max` of the available bytes, copied out. */
  take(max: number): Uint8Array<ArrayBuffer> {
    const end = this.#start + Math.min(max, this.available);
    const bytes = this.#buffer.slice(this.#start, end);
    this.#start = end;
    return bytes;
  }

  /**
   * The next request head, without the empty line that ends it, one character per byte; null
   * when the stream ends before it begins. Throws 431 when it outgrows the buffer.
   */
  async readHead(): Promise<string | null> {
    const buffer = this.#buffer;
    let scanned = 0;
    for (;;) {
      // RFC 9112 §2.2: empty lines before a request line SHOULD be ignored.
      while (this.available >= 2 && buffer[this.#start] === CR && buffer[this.#start + 1] === LF) {
        this.#start += 2;
      }
      for (let i = this.#start + Math.max(scanned - 3, 3); i < this.#end; i++) {
        if (
          buffer[i] === LF && buffer[i - 1] === CR && buffer[i - 2] === LF && buffer[i - 3] === CR
        ) {
          const head = _latin1(buffer.subarray(this.#start, i - 3));
          this.#start = i + 1;
          return head;
        }
      }
      scanned = this.available;
      if (scanned >= buffer.length) {
        throw new HttpError(
          431,
          `Request header fields too large: the head exceeds ${MAX_HEAD_BYTES} bytes`,
        );
      }
      if (!(await this.fill())) {
        if (this.available === 0) return null;
        throw new HttpError(400, "Bad request: the connection ended inside the request head");
      }
    }
  }

  /** One CRLF-terminated line of at most `max` bytes, without its CRLF (chunked framing). */
  async readLine(max: number): Promise<string> {
    const buffer = this.#buffer;
    let scanned = 0;
    for (;;) {
      for (let i = this.#start + scanned; i < this.#end; i++) {
        if (buffer[i] !== LF) continue;
        if (i === this.#start || buffer[i - 1] !== CR) {
          throw new HttpError(400, "Bad request: a line of the chunked body ends without CR");
        }
        const line = _latin1(buffer.subarray(this.#start, i - 1));
        this.#start = i + 1;
        return line;
      }
      scanned = this.available;
      if (scanned > max + 2) {
        throw new HttpError(400, `Bad request: a line of the chunked body exceeds ${max} bytes`);
      }
      if (!(await this.fill())) {
        throw new HttpError(400, "Bad request: the connection ended inside the chunked body");
      }
    }
  }
}

/** Bytes to a string of the same code units (ISO-8859-1), as Headers wants a ByteString. */
function _latin1(bytes: Uint8Array): string {
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! > 0x7f) {
      let text = "";
      for (const byte of bytes) text += String.fromCharCode(byte);
      return text;
    }
  }
  return _ascii.decode(bytes);
}
