// A legacy (2025-11-25) Streamable HTTP MCP server on raw sockets, for what Deno.serve would not
// let a test do: write bytes after a complete answer, drop a connection without answering, see
// every connection the gateway opens and when it closes one. It answers the handshake and
// tools/list itself (by path: several upstreams may share its origin); each tools/call goes to
// the test's `onCall`, which writes what it likes.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface RawCall {
  readonly id: number | string;
  readonly name: string;
  readonly path: string;
  /** Which connection (0, 1, 2… in the order they were opened) carried it. */
  readonly connection: number;
  /** A whole HTTP answer carrying this JSON-RPC result. */
  reply(result: Record<string, unknown>): Promise<void>;
  /** Bytes exactly as given. */
  write(text: string): Promise<void>;
  /** Closes the connection without a byte more. */
  drop(): void;
}

export interface RawUpstream {
  /** The URL of `path` (`/a`, `/b`…). */
  url(path: string): string;
  /** Connections opened so far. */
  readonly connections: number;
  /** JSON-RPC responses the client POSTed back (to requests the upstream sent it). */
  readonly responses: readonly Record<string, any>[];
  /** Resolves when the client has closed connection `index` (or it broke). */
  closed(index: number): Promise<void>;
  /** Writes `text` on connection `index`, outside any request. */
  writeOn(index: number, text: string): Promise<void>;
  close(): Promise<void>;
}

/** An HTTP/1.1 answer with a Content-Length body. */
export function httpAnswer(body: string, type = "application/json", status = 200): string {
  return `HTTP/1.1 ${status} OK\r\nContent-Type: ${type}\r\n` +
    `Content-Length: ${encoder.encode(body).byteLength}\r\n\r\n${body}`;
}

export function startRawUpstream(
  tools: Readonly<Record<string, readonly Record<string, unknown>[]>>,
  onCall: (call: RawCall) => Promise<void>,
): RawUpstream {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.TcpConn[] = [];
  const ends: PromiseWithResolvers<void>[] = [];
  const handlers: Promise<void>[] = [];
  const responses: Record<string, any>[] = [];

  const serve = async (conn: Deno.TcpConn, connection: number) => {
    const write = async (text: string) => {
      const bytes = encoder.encode(text);
      for (let at = 0; at < bytes.byteLength;) at += await conn.write(bytes.subarray(at));
    };
    const json = (id: unknown, body: Record<string, unknown>) =>
      write(httpAnswer(JSON.stringify({ jsonrpc: "2.0", id, ...body })));
    const reader = _requests(conn);
    for (;;) {
      const request = await reader.next();
      if (request === null) return;
      if (request.method !== "POST") {
        await write(httpAnswer("", "text/plain"));
        continue;
      }
      const message = JSON.parse(request.body);
      if (message.method === undefined) responses.push(message);
      if (message.id === undefined || message.method === undefined) {
        await write("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        continue;
      }
      switch (message.method) {
        case "initialize":
          await json(message.id, {
            result: {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "raw", version: "1" },
            },
          });
          break;
        case "tools/list":
          await json(message.id, { result: { tools: tools[request.path] ?? [] } });
          break;
        case "tools/call":
          await onCall({
            id: message.id,
            name: message.params.name,
            path: request.path,
            connection,
            reply: (result) => json(message.id, { result }),
            write,
            drop: () => conn.close(),
          });
          break;
        default:
          await json(message.id, { error: { code: -32601, message: "Method not found" } });
      }
    }
  };

  (async () => {
    for await (const conn of listener) {
      const connection = conns.length;
      conns.push(conn);
      const end = Promise.withResolvers<void>();
      ends.push(end);
      handlers.push(
        serve(conn, connection).catch(() => {}).finally(() => {
          end.resolve();
          try {
            conn.close();
          } catch {
            // Dropped by the test, or by the client's reset.
          }
        }),
      );
    }
  })();

  return {
    url: (path) => `http://127.0.0.1:${listener.addr.port}${path}`,
    get connections() {
      return conns.length;
    },
    responses,
    closed: (index) => ends[index]!.promise,
    async writeOn(index, text) {
      await conns[index]!.write(encoder.encode(text));
    },
    async close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // Closed already.
        }
      }
      await Promise.all(handlers);
    },
  };
}

/** The requests on one connection, one at a time: method, path and Content-Length body. */
function _requests(conn: Deno.Conn) {
  let text = "";
  const buffer = new Uint8Array(65_536);
  return {
    async next(): Promise<{ method: string; path: string; body: string } | null> {
      for (;;) {
        const end = text.indexOf("\r\n\r\n");
        if (end >= 0) {
          const head = text.slice(0, end);
          const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          const bytes = encoder.encode(text.slice(end + 4));
          if (bytes.byteLength >= length) {
            const [method = "", path = ""] = head.split(" ");
            text = decoder.decode(bytes.subarray(length));
            return { method, path, body: decoder.decode(bytes.subarray(0, length)) };
          }
        }
        const read = await conn.read(buffer);
        if (read === null) return null;
        text += decoder.decode(buffer.subarray(0, read), { stream: true });
      }
    },
  };
}
