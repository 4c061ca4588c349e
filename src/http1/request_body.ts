// A request body off the wire (RFC 9112 §6-§7): exactly Content-Length bytes, or chunks.
import { HttpError } from "../http/errors.ts";
import type { ByteReader } from "./byte_reader.ts";

/** Chunk-size lines and trailer fields may be this long; a chunk's data may be any size. */
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_FIELDS = 100;

export interface BodyHooks {
  /** Called before the first byte is read, e.g. to send 100 Continue. */
  readonly beforeRead: () => Promise<void>;
  /** Called once the whole body has arrived. */
  readonly done: () => void;
}

/**
 * The body as a stream that reads from the connection only when pulled. A framing error, an
 * early end, or the connection closing under it errors the stream with an HttpError, which
 * the body readers of src/http/ answer with its status.
 */
export function requestBody(
  reader: ByteReader,
  framing: { readonly kind: "length"; readonly length: number } | { readonly kind: "chunked" },
  hooks: BodyHooks,
): ReadableStream<Uint8Array<ArrayBuffer>> {
  return ReadableStream.from(async function* () {
    try {
      await hooks.beforeRead();
      if (framing.kind === "length") yield* _fixed(reader, framing.length);
      else yield* _chunked(reader);
    } catch (error) {
      if (error instanceof HttpError) throw error;
      // The read deadline closes the connection under a slow body; nothing else on our side does.
      if (error instanceof Deno.errors.BadResource || error instanceof Deno.errors.Interrupted) {
        throw new HttpError(408, "Request timeout: the body did not arrive within the deadline");
      }
      throw new HttpError(400, "Bad request: the connection failed while reading the body");
    }
    hooks.done();
  }());
}

async function* _fixed(reader: ByteReader, length: number) {
  let remaining = length;
  while (remaining > 0) {
    if (reader.available === 0 && !(await reader.fill())) {
      throw new HttpError(
        400,
        `Bad request: the connection ended after ${length - remaining} of ${length} body bytes`,
      );
    }
    const chunk = reader.take(remaining);
    remaining -= chunk.length;
    yield chunk;
  }
}

/** RFC 9112 §7.1: chunk-size [chunk-ext] CRLF data CRLF …, last-chunk, trailer section. */
async function* _chunked(reader: ByteReader) {
  for (;;) {
    const line = await reader.readLine(MAX_LINE_BYTES);
    // §7.1.1: extensions (after ";") are ignored.
    const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line)?.[1];
    if (size === undefined) throw new HttpError(400, "Bad request: malformed chunk size");
    const length = parseInt(size, 16);
    if (length === 0) break;
    yield* _fixed(reader, length);
    if ((await reader.readLine(MAX_LINE_BYTES)) !== "") {
      throw new HttpError(400, "Bad request: chunk data longer than its size");
    }
  }
  // §7.1.2: trailer fields may be discarded; the empty line ends the body.
  for (let fields = 0; (await reader.readLine(MAX_LINE_BYTES)) !== ""; fields++) {
    if (fields === MAX_TRAILER_FIELDS) {
      throw new HttpError(400, `Bad request: more than ${MAX_TRAILER_FIELDS} trailer fields`);
    }
  }
}
