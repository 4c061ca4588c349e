// bench/baseline_server.ts on Node.js, for `deno task bench as-run --runtime=node`: the same
// routes file, arguments and answers (fixed bytes and headers prepared once; `mcp` routes check
// the headers and parse the body; `stamp` reads Host and adds a fresh X-Request-Id), served by
// node:http as Vestibule's Node.js runtime serves (src/runtime/node.ts: the answer's headers in
// order through writeHead, the body after them, no keep-alive timer of node:http's own).
// Usage: node bench/baseline_server_node.mjs PORT ROUTES.json [stamp]
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";

const [port, routesFile, variant] = process.argv.slice(2);
const stamp = variant === "stamp";
const routes = new Map();
for (const route of JSON.parse(readFileSync(routesFile, "utf8"))) {
  routes.set(route.path, { ...route, body: readFileSync(route.file), flat: route.headers.flat() });
}

/** The route's headers with a fresh X-Request-Id in its place (`headers.set`, as in Deno's). */
function stamped(request, route) {
  request.headers.host;
  const headers = [...route.flat];
  const at = headers.findIndex((value, i) => i % 2 === 0 && value === "x-request-id");
  if (at === -1) headers.push("x-request-id", randomUUID());
  else headers[at + 1] = randomUUID();
  return headers;
}

function send(request, response, route) {
  const headers = stamp ? stamped(request, route) : route.flat;
  response.writeHead(200, headers);
  response.write(route.body);
  response.end();
}

function refuse(response, status) {
  response.writeHead(status);
  response.end();
}

const server = createServer({ keepAliveTimeout: 0 }, (request, response) => {
  const route = routes.get(request.url);
  if (route === undefined) return refuse(response, 404);
  if (!route.mcp) return send(request, response, route);
  const { headers } = request;
  const accept = headers["accept"] ?? "";
  if (
    request.method !== "POST" || headers["content-type"] !== "application/json" ||
    !accept.includes("application/json") || !accept.includes("text/event-stream") ||
    headers["mcp-protocol-version"] === undefined
  ) return refuse(response, 400);
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    let message = null;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      // refused below
    }
    if (message?.jsonrpc === "2.0" && typeof message.method === "string") {
      send(request, response, route);
    } else refuse(response, 400);
  });
});
server.keepAliveTimeout = 0;
server.listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
