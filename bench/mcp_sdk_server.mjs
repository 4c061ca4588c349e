// The comparison for bench/mcp_bench.ts: the official MCP TypeScript SDK's stateless
// Streamable HTTP server on Node (a new Server and transport per request, as the SDK's
// stateless example does), JSON responses, serving the tools/list entries given in a file.
// Usage: node mcp_sdk_server.mjs PORT TOOLS_JSON_FILE SDK_PACKAGE_DIR
import { createServer } from "node:http";
import { readFileSync } from "node:fs";

const [port, toolsFile, sdkDir] = process.argv.slice(2);
const { Server } = await import(`${sdkDir}/dist/esm/server/index.js`);
const { StreamableHTTPServerTransport } = await import(
  `${sdkDir}/dist/esm/server/streamableHttp.js`
);
const { ListToolsRequestSchema } = await import(`${sdkDir}/dist/esm/types.js`);
const tools = JSON.parse(readFileSync(toolsFile, "utf8"));

function mcpServer() {
  const server = new Server(
    { name: "sdk-bench", version: "1.0.0" },
    { capabilities: { tools: { listChanged: false } }, instructions: "bench" },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  return server;
}

const http = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/ready") {
    res.writeHead(200).end("ok");
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});
http.listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => http.close(() => process.exit(0)));
