// Server-sent events framing (WHATWG HTML §9.2): JSON-RPC messages in, event-stream text out.
// JSON.stringify never emits a raw line break, so each message is exactly one `data` line.

/** One `message` event: the only SSE framing in the code base. */
export function encodeSseEvent(message: string): string {
  return `event: message\ndata: ${message}\n\n`;
}

/**
 * A comment (WHATWG HTML §9.2.6): no event, but bytes on the wire, so that the idle timeouts of
 * clients and proxies do not close a stream whose answer is still on its way.
 */
export const SSE_KEEPALIVE = ":\n\n";

/** JSON-RPC messages (JSON text) -> event-stream bytes, one event per message; or a keep-alive. */
export function createSseEncoder(): TransformStream<string, Uint8Array> {
  const encoder = new TextEncoder();
  return new TransformStream({
    transform(message, controller) {
      const text = message === SSE_KEEPALIVE ? message : encodeSseEvent(message);
      controller.enqueue(encoder.encode(text));
    },
  });
}

/**
 * Event-stream text -> the `data` of each event, as it completes (WHATWG HTML §9.2.6: lines end
 * in CRLF, LF or CR; `:` starts a comment; several `data` lines join with LF; an event without
 * data is no event; an event cut off by the stream's end is dropped). Synchronous: the upstream
 * client feeds it each chunk as it arrives, with no stream machinery between (three Web Streams
 * transforms cost more than the few hundred bytes of a typical answer).
 */
export function createSseParser(): (chunk: string) => string[] {
  let pending = "";
  let data: string[] = [];
  return (chunk) => {
    const events: string[] = [];
    pending += chunk;
    let from = 0;
    for (;;) {
      const end = _lineEnd(pending, from);
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (end === -1 || (end === pending.length - 1 && pending.charCodeAt(end) === 13)) break;
      const text = pending.slice(from, end);
      from = end + (pending.startsWith("\r\n", end) ? 2 : 1);
      if (text === "") {
        if (data.length > 0) events.push(data.join("\n"));
        data = [];
        continue;
      }
      const colon = text.indexOf(":");
      const field = colon === -1 ? text : text.slice(0, colon);
      if (field !== "data") continue;
      const value = colon === -1 ? "" : text.slice(colon + 1);
      data.push(value.startsWith(" ") ? value.slice(1) : value);
    }
    pending = pending.slice(from);
    return events;
  };
}

/** The same, as a stream of text chunks to a stream of events' data. */
export function createSseDecoder(): TransformStream<string, string> {
  const parse = createSseParser();
  return new TransformStream({
    transform(chunk, controller) {
      for (const data of parse(chunk)) controller.enqueue(data);
    },
  });
}

/** Where the next line break (CR or LF) at or after `from` is, or -1. */
function _lineEnd(text: string, from: number): number {
  const lf = text.indexOf("\n", from);
  const cr = text.indexOf("\r", from);
  return cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
}
