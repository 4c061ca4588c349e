import assert from "node:assert/strict";
import { clientAddress } from "../../src/http/client_address.ts";

const peer: Deno.NetAddr = { transport: "tcp", hostname: "10.0.0.9", port: 5000 };
const request = (forwarded?: string) =>
  new Request("http://x.test/", {
    headers: forwarded === undefined ? {} : { "X-Forwarded-For": forwarded },
  });

Deno.test("client address: the socket peer unless the proxy is trusted", () => {
  assert.equal(clientAddress(request("1.2.3.4"), peer, false), "10.0.0.9");
  assert.equal(clientAddress(request(), peer, true), "10.0.0.9");
});

Deno.test("client address: behind a trusted proxy, the right-most X-Forwarded-For entry", () => {
  assert.equal(clientAddress(request("6.6.6.6, 1.2.3.4"), peer, true), "1.2.3.4");
  assert.equal(clientAddress(request(" , "), peer, true), "10.0.0.9");
});

Deno.test("client address: unix sockets are 'local'", () => {
  assert.equal(clientAddress(request(), { transport: "unix", path: "/s" }, false), "local");
});
