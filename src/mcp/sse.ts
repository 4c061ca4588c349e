// Server-sent events framing (WHATWG HTML §9.2): JSON-RPC messages in, event-stream text out.
// JSON.stringify never emits a raw line break, so each message is exactly one `data` line.

/** One `message` event: the only SSE framing in the code base. */
export function encodeSseEvent(message: string): string {
  return `event: message\ndata: ${message}\n\n`;
}

/** JSON-RPC messages (JSON text) -> event-stream bytes, one event per message. */
export function createSseEncoder(): TransformStream<string, Uint8Array> {
  const encoder = new TextEncoder();
  return new TransformStream({
    transform(message, controller) {
      controller.enqueue(encoder.encode(encodeSseEvent(message)));
    },
  });
}
