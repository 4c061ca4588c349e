// The limit for a design that serves precomputed bytes: a bare Deno.serve answering each
// path with fixed bytes read from files. Usage: baseline_server.ts PORT TYPE PATH=FILE…
const [port, ...routes] = Deno.args;
const bodies = new Map<string, { body: Uint8Array<ArrayBuffer>; type: string }>();
for (const route of routes) {
  const [path, type, file] = route.split("|");
  bodies.set(path!, { body: await Deno.readFile(file!), type: type! });
}
const notFound = new Uint8Array(0);
const server = Deno.serve(
  { hostname: "127.0.0.1", port: Number(port), onListen() {} },
  (request) => {
    const url = request.url;
    const found = bodies.get(url.slice(url.indexOf("/", 8)));
    return found
      ? new Response(found.body, { headers: { "Content-Type": found.type } })
      : new Response(notFound, { status: 404 });
  },
);
Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  Deno.exit(0);
});
