// The limit for a design that serves precomputed responses: a bare Deno.serve answering each
// path with fixed bytes and fixed headers, prepared once and cloned per request (the cheapest
// way Deno offers). Usage: baseline_server.ts PORT ROUTES.json, where ROUTES.json is
// [{ "path": "/health", "headers": [["content-type", "application/json"], …], "file": "…" }].
// A route with `"mcp": true` is the minimal hand-written MCP handler instead: it answers a POST
// whose headers name JSON and a protocol version and whose body parses as a JSON-RPC request,
// with the route's bytes (400 otherwise), the least any real MCP server must do per request.
// With a third argument `stamp` it is the floor for Vestibule's contract instead: every request
// also reads Host (routing by origin) and gets a fresh X-Request-Id header (the request log).
interface Route {
  readonly path: string;
  readonly headers: [string, string][];
  readonly file: string;
  readonly mcp?: boolean;
}

const [port, routesFile, variant] = Deno.args;
const stamp = variant === "stamp";
const routes: Route[] = JSON.parse(await Deno.readTextFile(routesFile!));
const responses = new Map<string, Response>();
const mcpPaths = new Set<string>();
for (const route of routes) {
  responses.set(
    route.path,
    new Response(await Deno.readFile(route.file), { headers: route.headers }),
  );
  if (route.mcp) mcpPaths.add(route.path);
}
const notFound = new Response(null, { status: 404 });
const badRequest = new Response(null, { status: 400 });

async function mcp(request: Request, answer: Response): Promise<Response> {
  const headers = request.headers;
  const accept = headers.get("accept") ?? "";
  if (
    request.method !== "POST" || headers.get("content-type") !== "application/json" ||
    !accept.includes("application/json") || !accept.includes("text/event-stream") ||
    headers.get("mcp-protocol-version") === null
  ) return badRequest.clone();
  const message = await request.json();
  return message?.jsonrpc === "2.0" && typeof message.method === "string"
    ? (stamp ? stamped(request, answer) : answer.clone())
    : badRequest.clone();
}

function stamped(request: Request, answer: Response): Response {
  request.headers.get("host");
  const response = answer.clone();
  response.headers.set("x-request-id", crypto.randomUUID());
  return response;
}

const server = Deno.serve(
  { hostname: "127.0.0.1", port: Number(port), onListen() {} },
  (request) => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", 8));
    const answer = responses.get(path);
    if (answer === undefined) return notFound.clone();
    if (mcpPaths.has(path)) return mcp(request, answer);
    return stamp ? stamped(request, answer) : answer.clone();
  },
);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  Deno.exit(0);
});
