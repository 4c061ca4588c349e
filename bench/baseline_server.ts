// The limit for a design that serves precomputed responses: a bare Deno.serve answering each
// path with fixed bytes and fixed headers, prepared once and cloned per request (the cheapest
// way Deno offers). Usage: baseline_server.ts PORT ROUTES.json, where ROUTES.json is
// [{ "path": "/health", "headers": [["content-type", "application/json"], …], "file": "…" }].
interface Route {
  readonly path: string;
  readonly headers: [string, string][];
  readonly file: string;
}

const [port, routesFile] = Deno.args;
const routes: Route[] = JSON.parse(await Deno.readTextFile(routesFile!));
const responses = new Map<string, Response>();
for (const route of routes) {
  responses.set(
    route.path,
    new Response(await Deno.readFile(route.file), { headers: route.headers }),
  );
}
const notFound = new Response(null, { status: 404 });
const server = Deno.serve(
  { hostname: "127.0.0.1", port: Number(port), onListen() {} },
  (request) => {
    const url = request.url;
    return (responses.get(url.slice(url.indexOf("/", 8))) ?? notFound).clone();
  },
);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  Deno.exit(0);
});
