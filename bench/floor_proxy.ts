/**
 * The gateway section's floor: Vestibule's own HTTP server (src/server.ts, with its defaults) and
 * upstream client (src/gateway/http1.ts) with nothing between them but what any MCP proxy must
 * do: parse the call, strip the tool's `upstream__` prefix, forward it in the session opened at
 * start, and send the upstream's answer back as it came. No token, scope, rate limit, audit or
 * request log: the gap between this and the gateway is what those and the MCP layers cost.
 * Runs on Deno and on Node.js (both read only the environment): FLOOR_PORT, FLOOR_UPSTREAM (the
 * upstream's MCP URL), FLOOR_PREFIX (the prefix to strip).
 */
import { runtime } from "../src/runtime/current.ts";
import { serve } from "../src/server.ts";
import { createHttp1Fetch } from "../src/gateway/http1.ts";
import { LEGACY_VERSION, openLegacySession, type Post } from "./legacy_session.ts";

const port = Number(runtime.env("FLOOR_PORT"));
const upstream = runtime.env("FLOOR_UPSTREAM")!;
const prefix = runtime.env("FLOOR_PREFIX")!;
const fetch1 = createHttp1Fetch();
const post: Post = (body, session) =>
  fetch1(upstream, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": LEGACY_VERSION,
      ...(session === undefined ? {} : { "Mcp-Session-Id": session }),
    },
    body,
  });

const session = await openLegacySession(post, "floor");

const server = serve({
  listen: [{ hostname: "127.0.0.1", port }],
  listenSettings: ["FLOOR_PORT"],
  trustProxy: false,
  maxConnections: 1000,
  readTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
  shutdownGraceMs: 1_000,
}, async (request) => {
  if (request.method === "GET") return new Response("ok\n");
  const message = await request.json();
  message.params.name = String(message.params.name).slice(prefix.length);
  const answer = await post(JSON.stringify(message), session);
  return new Response(await answer.text(), {
    status: answer.status,
    headers: { "Content-Type": answer.headers.get("content-type") ?? "application/json" },
  });
}, (line) => console.log(line));
await server.bound;
runtime.onSignal("SIGTERM", () => server.shutdown().then(() => runtime.exit(0)));
