// The Node.js runtime sends a complete body with its length, as Deno does, and still sends a
// streamed answer's events as they come (testkit/node_seam_server.ts, on the Node.js of
// TEST_NODE_BINARY; skipped with a message without one).
import assert from "node:assert/strict";
import { ROOT } from "../support/main_process.ts";
import { nodeBinary } from "../../../testkit/node_binary.ts";

const node = nodeBinary();
const decoder = new TextDecoder();

/** Reads from `conn` until the text so far ends with `end`. */
async function readUntil(conn: Deno.Conn, end: string): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(4096);
  while (!text.endsWith(end)) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error(`closed before ${JSON.stringify(end)}: ${text}`);
    text += decoder.decode(buffer.subarray(0, n));
  }
  return text;
}

async function ask(port: number, path: string): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
  );
  return conn;
}

Deno.test({
  name:
    "on Node.js a streamed answer's events arrive as they come, a complete body in full, and a request's signal fires when its client leaves",
  ignore: node === null,
  async fn() {
    const server = new Deno.Command(node!, {
      args: ["testkit/node_seam_server.ts"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    try {
      const lines = server.stdout.getReader();
      let printed = "";
      while (!printed.includes("\n")) {
        const { value, done } = await lines.read();
        if (done) throw new Error("the server ended before printing its port");
        printed += decoder.decode(value);
      }
      const port = Number(printed.trim());
      const fixed = await ask(port, "/fixed");
      const answer = await readUntil(fixed, "\r\n\r\nfixed body");
      assert.match(answer, /\r\ncontent-length: 10\r\n/i);
      assert.doesNotMatch(answer, /transfer-encoding/i);
      fixed.close();
      const stream = await ask(port, "/stream");
      // The second event exists only once /next is asked: a buffered stream never shows this.
      assert.match(await readUntil(stream, "event 0\n\r\n"), /\r\n\r\n8\r\nevent 0\n\r\n$/);
      const next = await ask(port, "/next");
      await readUntil(next, "released");
      next.close();
      assert.equal(await readUntil(stream, "0\r\n\r\n"), "8\r\nevent 1\n\r\n0\r\n\r\n");
      stream.close();
      // A request's signal fires when its client goes away before the answer.
      const waiting = await ask(port, "/wait");
      const aborted = await ask(port, "/aborted");
      waiting.close();
      await readUntil(aborted, "aborted");
      aborted.close();
      lines.releaseLock();
    } finally {
      server.kill();
      await server.status;
      await server.stdout.cancel().catch(() => {});
    }
  },
});
