import { HttpError } from "./errors.ts";
import { joinBytes } from "../join_bytes.ts";

/** A body read whole, or why not: it passed the cap, or its stream broke off before its end. */
export type CappedBody =
  | { readonly ok: true; readonly bytes: Uint8Array<ArrayBuffer> }
  | { readonly ok: false; readonly problem: "too-large" | "incomplete" };

/**
 * Reads the body of a request we serve or a response we fetched, giving up as soon as it
 * passes `maxBytes`, whether the size is announced by Content-Length or discovered while a
 * chunked body streams in: nothing past the cap is buffered and the rest is cancelled. A
 * stream that fails before its end (the peer went away or reset the connection, the framing
 * broke, the caller's abort signal fired) is "incomplete", never an exception: a peer's
 * misbehaviour is its problem, not a server error.
 */
export async function readCapped(
  message: Request | Response,
  maxBytes: number,
): Promise<CappedBody> {
  const declared = message.headers.get("Content-Length");
  if (declared !== null && Number(declared) > maxBytes) {
    await message.body?.cancel().catch(() => {});
    return TOO_LARGE;
  }
  try {
    // Deno.serve and fetch frame a Content-Length body to exactly that many bytes, so a size
    // declared within the cap is read in one step, skipping the stream machinery (about a
    // quarter of a small MCP request's cost). A Request built in-process may lie; it is refused
    // all the same. A compressed response is decompressed by fetch: its Content-Length bounds
    // nothing, so it streams.
    if (
      declared !== null && /^\d+$/.test(declared) &&
      (message instanceof Request || message.headers.get("Content-Encoding") === null)
    ) {
      const bytes = await message.bytes();
      return bytes.byteLength > maxBytes ? TOO_LARGE : { ok: true, bytes };
    }
    if (message.body === null) return { ok: true, bytes: new Uint8Array(0) };
    const reader = message.body.getReader();
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        return TOO_LARGE;
      }
      chunks.push(value);
    }
    return { ok: true, bytes: joinBytes(chunks, total) };
  } catch {
    return INCOMPLETE;
  }
}

/**
 * readCapped for a handler: a body over the cap is 413, one cut short 400 (RFC 9112 §8: an
 * incomplete request; the client has usually gone, so the status mostly tells the request
 * log that this was the client's doing). Both close the connection.
 */
export async function readBodyCapped(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const body = await readCapped(request, maxBytes);
  if (body.ok) return body.bytes;
  throw body.problem === "too-large"
    ? new HttpError(413, `Cannot read request body: exceeds ${maxBytes} bytes`, CLOSE)
    : new HttpError(400, "Cannot read request body: it ended before it was complete", CLOSE);
}

const TOO_LARGE = Object.freeze({ ok: false, problem: "too-large" } as const);
const INCOMPLETE = Object.freeze({ ok: false, problem: "incomplete" } as const);
const CLOSE = Object.freeze({ Connection: "close" });
