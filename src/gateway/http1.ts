// A small HTTP/1.1 client for the gateway's upstream calls: the part of fetch that
// http_transport.ts uses, over keep-alive connections of our own, at a fraction of fetch's CPU
// per call. Deliberately without proxies, redirects (the transport posts to the operator's URL
// and nowhere else), compression (it asks for `identity`, so Content-Length bounds the body)
// and HTTP/2. Its connections are in http1_pool.ts, each one's reading in http1_wire.ts.
import { createPool } from "./http1_pool.ts";
import { TOKEN, typed, Wire } from "./http1_wire.ts";
import { runtime } from "../runtime/current.ts";
import { BoundedMap } from "../bounded_map.ts";

export interface Http1FetchOptions {
  /** Connections open at once per origin (scheme, host and port), busy or idle; 64 by default. */
  readonly maxPerOrigin?: number;
  /** Idle connections kept per pool (an origin, or one person's connections to it); 64 by default. */
  readonly maxIdlePerPool?: number;
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
  /**
   * Whose connections carry it: requests with different pools never share a connection (each
   * person's own, for an upstream each person signs in to). One pool per origin by default.
   */
  readonly pool?: string;
  /**
   * It may be sent twice (RFC 9110 §9.2.2): only then is a request that failed on a reused
   * connection before any byte of its answer sent again on a new one. By default only for the
   * idempotent methods; never a POST the caller did not mark.
   */
  readonly idempotent?: boolean;
}

export interface Http1Fetch {
  (url: string, init: Http1Init): Promise<Response>;
  /** Closes the idle connections and keeps none from now on. */
  close(): void;
}

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
const BAD_VALUE = /[\r\n\0]/;
/** RFC 9110 §9.2.2. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);
const encoder = new TextEncoder();
/** Parsed URLs kept: one per upstream, as a rule. */
const MAX_TARGETS = 1_000;

export function createHttp1Fetch(options: Http1FetchOptions = {}): Http1Fetch {
  const maxHead = options.maxHeadBytes ?? 65_536;
  const caCerts = options.caCerts ? [...options.caCerts] : undefined;
  const pool = createPool({
    maxPerOrigin: options.maxPerOrigin ?? 64,
    maxIdlePerKey: options.maxIdlePerPool ?? 64,
    idleMs: options.idleTimeoutMs ?? 4_000,
  });

  const connect = async (target: URL, origin: string, key: string): Promise<Wire> => {
    const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
    const tls = target.protocol === "https:";
    const port = Number(target.port) || (tls ? 443 : 80);
    try {
      // A certificate refused is a connection failure, not a failed write.
      const conn = await runtime.connect({
        hostname,
        port,
        ...(tls ? { tls: caCerts ? { caCerts } : {} } : {}),
      });
      return new Wire(conn, origin, key);
    } catch (error) {
      throw new TypeError("fetch failed: could not connect", { cause: error });
    }
  };

  // Every call of an upstream goes to the same few URLs: each is parsed once.
  const targets = new BoundedMap<string, URL>(MAX_TARGETS);
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (target === undefined) targets.set(url, target = new URL(url));
    return target;
  };

  const fetch1 = (url: string, init: Http1Init): Promise<Response> => {
    const { signal } = init;
    if (signal?.aborted) return Promise.reject(signal.reason);
    let target: URL;
    try {
      target = targetOf(url);
    } catch (error) {
      return Promise.reject(error);
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      return Promise.reject(new TypeError(`fetch failed: ${target.protocol} is not http or https`));
    }
    const origin = `${target.protocol}//${target.host}`;
    const key = init.pool === undefined ? origin : `${origin} ${init.pool}`;
    const method = init.method.toUpperCase();
    const idempotent = init.idempotent ?? IDEMPOTENT.has(method);
    let request: Uint8Array;
    try {
      request = _serialize(method, target, init.headers, init.body);
    } catch (error) {
      return Promise.reject(error);
    }

    return new Promise<Response>((resolve, reject) => {
      let wire: Wire | null = null;
      let body: ReadableStreamDefaultController<Uint8Array> | null = null;
      const onAbort = () => {
        if (wire !== null) pool.discard(wire);
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
        if (reuse) pool.release(wire!);
        else pool.discard(wire!);
      };
      const failed = (error: unknown) => {
        signal?.removeEventListener("abort", onAbort);
        if (wire !== null) pool.discard(wire);
        reject(signal?.aborted ? signal.reason : error);
      };

      const exchange = async (): Promise<Response> => {
        for (let attempt = 0;; attempt++) {
          wire = await pool.acquire(origin, key, () => connect(target, origin, key), signal);
          if (signal?.aborted) throw signal.reason;
          try {
            await wire.write(request);
            return await wire.readAnswer(method, maxHead, (ended, reuse) => {
              if (ended) done(reuse);
            }, (controller) => body = controller);
          } catch (failure) {
            const error = typed(failure);
            // A reused connection the server closed just as it was taken may never have read
            // the request: one more try on a new connection, for a request that may be sent
            // twice. Anything after the answer began is no such case.
            if (!idempotent || !wire.reused || wire.answered || attempt > 0 || signal?.aborted) {
              throw error;
            }
            pool.discard(wire);
          }
        }
      };
      exchange().then(resolve, failed);
    });
  };

  return Object.assign(fetch1, { close: pool.close });
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
  const line = (name: string, value: string) => {
    // The value is never quoted back: it may be the operator's credential.
    if (!TOKEN.test(name)) throw new TypeError("fetch failed: a header name is not a token");
    if (BAD_VALUE.test(value)) {
      throw new TypeError(`fetch failed: the ${name} header's value has a line break`);
    }
    if (!OWN_HEADERS.has(name.toLowerCase())) head += `${name}: ${value}\r\n`;
  };
  if (headers instanceof Headers) headers.forEach((value, name) => line(name, value));
  // A record's own names: one array, not one per entry.
  else for (const name of Object.keys(headers)) line(name, headers[name]!);
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
