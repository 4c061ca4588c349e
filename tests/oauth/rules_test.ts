// Pure rules: redirect URI matching, resource canonicalisation, address classification.
import assert from "node:assert/strict";
import { classifyAddress } from "../../src/oauth/addresses.ts";
import { redirectUriMatches, redirectUriProblem } from "../../src/oauth/redirect_uri.ts";
import { canonicalResource } from "../../src/oauth/resource.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

Deno.test("redirect URI matching is exact except the loopback port", async (t) => {
  const cases: [string, string, boolean][] = [
    ["https://a.example/cb", "https://a.example/cb", true],
    ["https://a.example/cb", "https://a.example/cb/", false],
    ["https://a.example/cb", "https://A.example/cb", false],
    ["https://a.example/cb", "https://a.example:443/cb", false],
    ["https://a.example/cb?x=1", "https://a.example/cb?x=1&y=2", false],
    ["http://127.0.0.1/cb", "http://127.0.0.1:4567/cb", true],
    ["http://127.0.0.1:1111/cb", "http://127.0.0.1:2222/cb", true],
    ["http://[::1]/cb", "http://[::1]:80/cb", true],
    ["http://localhost/cb?a=b", "http://localhost:9/cb?a=b", true],
    ["http://localhost/cb", "http://127.0.0.1:9/cb", false],
    ["http://127.0.0.1/cb", "http://127.0.0.1:9/cb?x", false],
    ["http://127.0.0.1/cb", "https://127.0.0.1:9/cb", false],
    ["http://[::1]/cb", "http://[::1]:9/cb/", false],
    ["http://127.0.0.1/cb", "http://127.0.0.1.evil.example:9/cb", false],
    ["http://127.0.0.1/cb", "http://127.0.0.1:9@evil.example/cb", false],
    ["http://127.0.0.1/cb", "http://127.0.0.1:65535/cb", true],
    // Not a port (RFC 6335 §6): the redirect could not even be built.
    ["http://127.0.0.1/cb", "http://127.0.0.1:65536/cb", false],
    ["http://localhost:2/cb", "http://localhost:99999/cb", false],
    ["com.example.app:/cb", "com.example.app:/cb", true],
  ];
  for (const [registered, presented, expected] of cases) {
    await t.step(`${registered} vs ${presented}`, () => {
      assert.equal(redirectUriMatches(registered, presented), expected);
    });
  }
  await t.step("problems are named", () => {
    assert.equal(redirectUriProblem("https://a.example/cb#x"), "must not contain a fragment");
    assert.equal(redirectUriProblem("DATA:text/html,x"), "must not use the data: scheme");
    assert.equal(
      redirectUriProblem("http://a.example/cb"),
      "must use https, or http only on 127.0.0.1, [::1] or localhost",
    );
    assert.equal(redirectUriProblem("https://a.example/cb"), null);
  });
});

Deno.test("resource canonicalisation", async (t) => {
  const config = { apiUrl: "https://api.example.com" };
  const cases: [string | null, boolean][] = [
    [null, true],
    ["https://api.example.com", true],
    ["https://api.example.com/", true],
    ["HTTPS://API.EXAMPLE.COM", true],
    ["https://api.example.com:443/", true],
    ["https://api.example.com/api/mcp", false],
    ["https://api.example.com//", false],
    ["https://api.example.com/.", false],
    ["https://api.example.com/?", false],
    ["https://api.example.com/#", false],
    ["https://u@api.example.com/", false],
    ["http://api.example.com/", false],
    ["https://api.example.com.evil/", false],
    ["https://api.example.com:8443/", false],
    ["api.example.com", false],
    // URL parsing drops tabs, line breaks and trailing spaces and reads "\\" as "/"; the
    // raw value is no URI.
    ["https://api.example.com\\", false],
    ["https://api.example.com\t", false],
    ["https://api.example.com ", false],
    ["https://api.ex\nample.com/", false],
  ];
  for (const [raw, ok] of cases) {
    await t.step(String(raw), () => {
      const check = canonicalResource(raw, config);
      assert.equal(check.ok, ok);
      if (check.ok) assert.equal(check.resource, "https://api.example.com");
      else assert.equal(check.description, '"resource" must equal "https://api.example.com"');
    });
  }
});

Deno.test("address classification refuses everything but public unicast", async (t) => {
  const cases: [string, string][] = [
    ["8.8.8.8", "public"],
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.32.0.1", "public"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "private"],
    ["100.64.0.1", "private"],
    ["0.0.0.0", "private"],
    ["224.0.0.1", "private"],
    ["::1", "loopback"],
    ["::", "private"],
    ["fe80::1", "private"],
    ["fd00::1", "private"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:169.254.169.254", "private"],
    ["::ffff:a9fe:a9fe", "private"],
    ["64:ff9b::a9fe:a9fe", "private"],
    ["2606:4700::1111", "public"],
    ["not-an-ip", "private"],
  ];
  for (const [address, kind] of cases) {
    await t.step(address, () => assert.equal(classifyAddress(address), kind));
  }
});

Deno.test("address classification judges IPv6 forms by the IPv4 addresses they embed", async (t) => {
  const cases: [address: string, kind: string, why: string][] = [
    ["::ffff:8.8.8.8", "public", "IPv4-mapped"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback", "IPv4-mapped, written out"],
    ["::ffff:10.0.0.1", "private", "IPv4-mapped"],
    ["64:ff9b::8.8.8.8", "public", "NAT64"],
    ["64:ff9b::7f00:1", "loopback", "NAT64"],
    ["64:ff9b::c0a8:101", "private", "NAT64 of 192.168.1.1"],
    ["64:ff9b:1::8.8.8.8", "private", "local-use NAT64 is never public"],
    ["64:ff9b:1:808:8:800::", "private", "local-use NAT64, /48 layout"],
    ["::127.0.0.1", "loopback", "IPv4-compatible"],
    ["::10.0.0.1", "private", "IPv4-compatible"],
    ["::8.8.8.8", "private", "IPv4-compatible is deprecated, never public"],
    ["2002:7f00:1::", "loopback", "6to4 of 127.0.0.1 (the report)"],
    ["2002:7F00:0001::1", "loopback", "6to4, upper case"],
    ["2002:a00:1::1", "private", "6to4 of 10.0.0.1"],
    ["2002:a9fe:a9fe:1::1", "private", "6to4 of 169.254.169.254"],
    ["2002:808:808::1", "public", "6to4 of 8.8.8.8"],
    ["2001:0:808:808::f7f7:f7f7", "public", "Teredo: server and client 8.8.8.8"],
    ["2001:0:808:808::80ff:fffe", "loopback", "Teredo: client 127.0.0.1, inverted"],
    ["2001:0:808:808::3f57:fefe", "private", "Teredo: client 192.168.1.1, inverted"],
    ["2001:0:a00:1::f7f7:f7f7", "private", "Teredo: server 10.0.0.1"],
    ["2001:0:7f00:1::f5ff:fffe", "private", "Teredo: server loopback, client 10.0.0.1"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "private", "RFC 4380's example: client 192.0.2.45"],
  ];
  for (const [address, kind, why] of cases) {
    await t.step(`${address} (${why})`, () => assert.equal(classifyAddress(address), kind));
  }
});

Deno.test("address classification counts only global unicast IPv6 as public", async (t) => {
  const cases: [address: string, kind: string, why: string][] = [
    ["::ffff:0:10.0.0.1", "private", "IPv4-translated of a private address"],
    ["::ffff:0:169.254.169.254", "private", "IPv4-translated of the metadata address"],
    ["::ffff:0:8.8.8.8", "private", "IPv4-translated is obsolete, never public"],
    ["::ffff:0:127.0.0.1", "loopback", "IPv4-translated of loopback"],
    ["fec0::1", "private", "site-local"],
    ["feff:ffff::1", "private", "site-local, its last address"],
    ["fe80::1%eth0", "private", "link-local with a zone"],
    ["ff02::1", "private", "multicast"],
    ["100::1", "private", "discard-only"],
    ["4000::1", "private", "unassigned, outside 2000::/3"],
    ["5f00::1", "private", "SRv6 SIDs"],
    ["1fff:ffff::1", "private", "just below 2000::/3"],
    ["2001:db8::1", "private", "documentation"],
    ["3fff::1", "private", "documentation (RFC 9637)"],
    ["3fff:fff::1", "private", "documentation, its last /32"],
    ["2001:2::1", "private", "benchmarking"],
    ["2001:10::1", "private", "ORCHID"],
    ["2001:1ff::1", "private", "IETF protocol assignments, last /32"],
    ["64:ff9b:2::1", "private", "next to NAT64, unassigned"],
    ["2000::1", "public", "first of global unicast"],
    ["2001:200::1", "public", "just past 2001::/23"],
    ["2001:4860:4860::8888", "public", "a public resolver"],
    ["2A00:1450:4001::1", "public", "upper case"],
    ["3fff:1000::1", "public", "just past 3fff::/20"],
    ["192.88.99.1", "private", "6to4 relay anycast (deprecated)"],
    ["2002:c058:6301::", "private", "6to4 of the relay anycast address"],
  ];
  for (const [address, kind, why] of cases) {
    await t.step(`${address} (${why})`, () => assert.equal(classifyAddress(address), kind));
  }
});

Deno.test("scope parsing keeps catalogue order and names the unknown", () => {
  assert.deepEqual(SPEC_SCOPES.parse("members.read  app.access app.access"), {
    ok: true,
    scopes: ["app.access", "members.read"],
  });
  assert.deepEqual(SPEC_SCOPES.parse("app.access admin"), { ok: false, unknown: "admin" });
  assert.deepEqual(SPEC_SCOPES.parse("toString"), { ok: false, unknown: "toString" });
});
