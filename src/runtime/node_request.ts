// The Request a node:http request becomes (src/runtime/node.ts): its body as a stream the
// handler reads, which a body cut short fails, and its signal, made only when asked for.
import type { IncomingMessage } from "node:http";

/**
 * A request's signal, made only when a handler asks for it. As Deno with `no-legacy-abort`, it
 * fires when the connection is closed (the client went away, or the pool closed it) before the
 * answer was sent, never after.
 */
export class Gone {
  readonly #connection: AbortSignal;
  #controller: AbortController | null = null;
  #closedEarly = false;
  readonly #onConnectionAbort = () => this.#controller?.abort(this.#connection.reason);

  constructor(connection: AbortSignal) {
    this.#connection = connection;
  }

  signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#connection.aborted) this.#controller.abort(this.#connection.reason);
      else if (this.#closedEarly) this.#controller.abort();
      else this.#connection.addEventListener("abort", this.#onConnectionAbort, { once: true });
    }
    return this.#controller.signal;
  }

  /** The answer's connection closed, after the answer was sent or before. */
  settle(answered: boolean): void {
    if (this.#controller !== null) {
      this.#connection.removeEventListener("abort", this.#onConnectionAbort);
    }
    if (answered) return;
    this.#closedEarly = true;
    this.#controller?.abort();
  }
}

/**
 * A Request whose signal is the lazily made one above: given to Request's constructor, a
 * signal costs every request a listener, a second controller and a finalizer (with
 * AbortSignal.any, more than half of a public read's own JavaScript time on Node.js, measured).
 */
class _NodeRequest extends Request {
  readonly #gone: Gone;

  constructor(url: string, init: RequestInit, gone: Gone) {
    super(url, init);
    this.#gone = gone;
  }

  override get signal(): AbortSignal {
    return this.#gone.signal();
  }
}

export function toRequest(
  incoming: IncomingMessage,
  body: ReadableStream<Uint8Array> | null,
  gone: Gone,
): Request {
  const host = incoming.headers.host ?? "localhost";
  const headers = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
    headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
  }
  return new _NodeRequest(
    `http://${host}${incoming.url ?? "/"}`,
    {
      method: incoming.method ?? "GET",
      headers,
      ...(body === null ? {} : { body, duplex: "half" }),
    } as RequestInit,
    gone,
  );
}

/**
 * The request's body as a stream (none for GET and HEAD), read as the handler asks, and a way to
 * fail it: node:http reports a body cut short on the socket, not on the request.
 */
export function requestBody(
  incoming: IncomingMessage,
): { stream: ReadableStream<Uint8Array>; fail(error: Error): void } | null {
  if (incoming.method === "GET" || incoming.method === "HEAD") return null;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const fail = (error: Error) => {
    if (!open) return;
    open = false;
    controller.error(error);
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      incoming.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once("end", () => {
        if (open) controller.close();
        open = false;
      });
      incoming.once("aborted", () => fail(new Error("the client went away")));
      incoming.once("error", fail);
      incoming.pause();
    },
    pull: () => void incoming.resume(),
    cancel() {
      open = false;
      incoming.resume();
    },
  });
  return { stream, fail };
}
