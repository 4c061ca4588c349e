// Raw loopback listeners for the gateway's HTTP/1.1 client tests, written here to frame answers
// exactly as a test needs (chunks on cue, an idle close, a head too big, a body longer than it
// says): for tests/gateway/http1_test.ts and http1_framing_test.ts.

const encoder = new TextEncoder();
const latin1 = new TextDecoder("latin1");
export const POST = { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" };

/** A listener whose every connection `answer` handles; `connections` counts them. */
export function rawServer(answer: (conn: Deno.TcpConn, request: string) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const handlers: Promise<void>[] = [];
  let connections = 0;
  (async () => {
    for await (const conn of listener) {
      connections++;
      handlers.push((async () => {
        try {
          await answer(conn, await readRequest(conn));
        } catch {
          // The client went away; the test says what it expected.
        } finally {
          try {
            conn.close();
          } catch {
            // Closed by the handler.
          }
        }
      })());
    }
  })();
  return {
    url: `http://127.0.0.1:${listener.addr.port}/mcp`,
    get connections() {
      return connections;
    },
    async close() {
      listener.close();
      await Promise.all(handlers);
    },
  };
}

/** One request's head and Content-Length body, as text. */
export async function readRequest(conn: Deno.Conn): Promise<string> {
  const buffer = new Uint8Array(65_536);
  let bytes = new Uint8Array(0);
  for (;;) {
    const read = await conn.read(buffer);
    if (read === null) return latin1.decode(bytes);
    const grown = new Uint8Array(bytes.byteLength + read);
    grown.set(bytes);
    grown.set(buffer.subarray(0, read), bytes.byteLength);
    bytes = grown;
    // Counted in bytes: the head is ASCII, the body as long as its Content-Length says.
    const text = latin1.decode(bytes);
    const end = text.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
    if (end >= 0 && bytes.byteLength >= end + 4 + length) return new TextDecoder().decode(bytes);
  }
}

export const write = (conn: Deno.Conn, text: string) => conn.write(encoder.encode(text));
