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
 * data is no event; an event cut off by the stream's end is dropped). The upstream client reads SSE answers through it, chunk by chunk.
 */
export function createSseDecoder(): TransformStream<string, string> {
  let pending = "";
  let data: string[] = [];
  const line = (text: string, controller: TransformStreamDefaultController<string>) => {
    if (text === "") {
      if (data.length > 0) controller.enqueue(data.join("\n"));
      data = [];
      return;
    }
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    if (field !== "data") return;
    const value = colon === -1 ? "" : text.slice(colon + 1);
    data.push(value.startsWith(" ") ? value.slice(1) : value);
  };
  return new TransformStream({
    transform(chunk, controller) {
      pending += chunk;
      for (;;) {
        const end = pending.search(/\r\n|\r|\n/);
        // A CR at the very end may be the first half of a CRLF still on its way.
        if (end === -1 || (end === pending.length - 1 && pending[end] === "\r")) break;
        const width = pending.startsWith("\r\n", end) ? 2 : 1;
        line(pending.slice(0, end), controller);
        pending = pending.slice(end + width);
      }
    },
  });
}
