// The Node.js runtime's serving seam (src/runtime/node.ts) alone, for tests/blackbox/process/
// node_seam_test.ts: GET /stream answers an event, then the next only once GET /next arrives
// (an answer that buffered its stream would never show the first); GET /fixed a complete body;
// GET /wait never answers, and GET /aborted answers once the signal of a /wait request fired.
// Usage: node testkit/node_seam_server.ts (prints the port).
import { nodeRuntime } from "../src/runtime/node.ts";

const listener = nodeRuntime.listen("127.0.0.1", 0);
const encoder = new TextEncoder();
let release: () => void = () => {};
let waitAborted: () => void = () => {};
const waitWasAborted = new Promise<void>((resolve) => waitAborted = resolve);

function handler(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path === "/next") {
    release();
    return Promise.resolve(new Response("released"));
  }
  if (path === "/fixed") return Promise.resolve(new Response("fixed body"));
  if (path === "/aborted") return waitWasAborted.then(() => new Response("aborted"));
  if (path === "/wait") {
    return new Promise((_, reject) =>
      request.signal.addEventListener("abort", () => {
        waitAborted();
        reject(request.signal.reason);
      })
    );
  }
  const released = new Promise<void>((resolve) => release = resolve);
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(encoder.encode("event 0\n"));
      void released.then(() => {
        controller.enqueue(encoder.encode("event 1\n"));
        controller.close();
      });
    },
  });
  return Promise.resolve(new Response(body, { headers: { "Content-Type": "text/event-stream" } }));
}

setTimeout(() => console.log(listener.addr.port), 0);
for (;;) {
  const conn = await listener.accept();
  nodeRuntime.serveOnConnection!(
    conn,
    new AbortController().signal,
    handler,
    () => new Response("failed", { status: 500 }),
    () => {},
  );
}
