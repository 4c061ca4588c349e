// A local OTLP/HTTP collector for the tracing section: accepts /v1/traces and /v1/logs, reads the
// body, answers 200 with an empty protobuf response, and says on GET /health how many exports
// and bytes it took. `deno run --allow-net=127.0.0.1 bench/otlp_sink_server.ts PORT`
const port = Number(Deno.args[0]);
let exports = 0;
let bytes = 0;
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (request) => {
  const path = new URL(request.url).pathname;
  if (request.method === "GET" && path === "/health") {
    return Response.json({ exports, bytes });
  }
  if (request.method !== "POST" || (path !== "/v1/traces" && path !== "/v1/logs")) {
    return new Response("not found", { status: 404 });
  }
  bytes += (await request.arrayBuffer()).byteLength;
  exports++;
  return new Response(new Uint8Array(), { headers: { "Content-Type": "application/x-protobuf" } });
});
