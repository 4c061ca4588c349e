// Server-sent events framing (WHATWG HTML §9.2): JSON-RPC messages in, event-stream bytes out.
// JSON.stringify never emits a raw line break, so each message is exactly one `data` line.

const encoder = new TextEncoder();

/** One `message` event: the only SSE framing in the code base. */
export function encodeSseEvent(message: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`event: message\ndata: ${message}\n\n`);
}

/** JSON-RPC messages (JSON text) -> event-stream bytes, one event per message. */
export function createSseEncoder(): TransformStream<string, Uint8Array> {
  return new TransformStream({
    transform(message, controller) {
      controller.enqueue(encodeSseEvent(message));
    },
  });
}
