// Server-sent events framing (WHATWG HTML §9.2): JSON-RPC messages in, event-stream bytes out.
// JSON.stringify never emits a raw line break, so each message is exactly one `data` line.

const encoder = new TextEncoder();

const EVENT_HEAD = encoder.encode("event: message\ndata: ");
const EVENT_TAIL = encoder.encode("\n\n");

/** One `message` event around a UTF-8 JSON-RPC message: the only SSE framing in the code base. */
export function encodeSseEvent(message: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(EVENT_HEAD.byteLength + message.byteLength + EVENT_TAIL.byteLength);
  out.set(EVENT_HEAD);
  out.set(message, EVENT_HEAD.byteLength);
  out.set(EVENT_TAIL, EVENT_HEAD.byteLength + message.byteLength);
  return out;
}

/** JSON-RPC messages (JSON text) -> event-stream bytes, one event per message. */
export function createSseEncoder(): TransformStream<string, Uint8Array> {
  return new TransformStream({
    transform(message, controller) {
      controller.enqueue(encodeSseEvent(encoder.encode(message)));
    },
  });
}
