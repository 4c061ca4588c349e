import assert from "node:assert/strict";
import { createHostRouter } from "../../src/http/host_router.ts";

const context = { clientAddress: "127.0.0.1" };
const site = (name: string) => () => Promise.resolve(new Response(name));

const router = createHostRouter([
  { origin: "https://www.example.com", handler: site("www") },
  { origin: "http://127.0.0.1:8001", handler: site("auth") },
]);

function request(host: string, path = "/", method = "GET"): Request {
  const headers = new Headers();
  const req = new Request(`http://ignored.test${path}`, { method, headers });
  // Request's own Host is not settable through the constructor's URL; set the header.
  req.headers.set("Host", host);
  return req;
}

Deno.test("host router: by Host, with or without the default port, case-insensitive", async () => {
  assert.equal(await (await router(request("www.example.com"), context)).text(), "www");
  assert.equal(await (await router(request("WWW.example.com:443"), context)).text(), "www");
  assert.equal(await (await router(request("127.0.0.1:8001"), context)).text(), "auth");
});

Deno.test("host router: unknown Host is 421, or 403 with a JSON-RPC error on MCP paths", async () => {
  const site = await router(request("evil.example"), context);
  assert.equal(site.status, 421);
  assert.match(await site.text(), /evil\.example/);
  assert.equal((await router(request("127.0.0.1:8002"), context)).status, 421);
  for (const path of ["/mcp", "/api/mcp"]) {
    const mcp = await router(request("evil.example", path, "POST"), context);
    assert.equal(mcp.status, 403);
    const body = await mcp.json();
    assert.equal(body.jsonrpc, "2.0");
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
  }
  assert.equal((await router(request(""), context)).status, 421);
});
