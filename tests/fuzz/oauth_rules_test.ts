// Properties of the redirect-URI and resource rules (src/oauth/redirect_uri.ts, resource.ts).
import assert from "node:assert/strict";
import fc from "npm:fast-check@^4.10.2";
import { redirectUriMatches, redirectUriProblem } from "../../src/oauth/redirect_uri.ts";
import { canonicalResource } from "../../src/oauth/resource.ts";
import { fuzzRuns, hostileText } from "./fuzz_support.ts";

const LOOPBACK_HOSTS = ["127.0.0.1", "[::1]", "localhost"];

const port = fc.oneof(
  fc.integer({ min: 1, max: 65535 }),
  fc.constantFrom(0, 80, 65535, 65536, 99999, 100000),
).map(String);

const pathAndQuery = fc.oneof(
  fc.constantFrom("/cb", "/", "", "/cb?x=1", "/a/b/", "?q", "/cb/", "/CB", "/%2e/cb"),
  hostileText.map((s) => `/cb${s}`),
);

/** What clients register: loopback http (with or without a port), https, private-use schemes. */
const registered: fc.Arbitrary<string> = fc.oneof(
  fc.record({
    host: fc.constantFrom(...LOOPBACK_HOSTS),
    port: fc.option(port),
    rest: pathAndQuery,
  }).map(({ host, port, rest }) => `http://${host}${port === null ? "" : `:${port}`}${rest}`),
  pathAndQuery.map((rest) => `https://client.example.com${rest}`),
  pathAndQuery.map((rest) => `com.example.app:${rest}`),
  hostileText,
);

/** The authority of a `scheme://authority…` string, split off the rest. */
function _split(uri: string): { scheme: string; host: string; port: string | null; rest: string } {
  const match = /^([^:/?#]+):\/\/([^/?#]*)(.*)$/s.exec(uri);
  if (!match) return { scheme: "", host: "", port: null, rest: uri };
  const authority = /^(.*?)(?::(\d*))?$/s.exec(match[2]!)!;
  return { scheme: match[1]!, host: authority[1]!, port: authority[2] ?? null, rest: match[3]! };
}

/** Ways a presented URI can differ from the registered one. */
const presentedFor = (uri: string): fc.Arbitrary<string> => {
  const { scheme, host, rest } = _split(uri);
  const authority = (p: string | null) => `${host}${p === null ? "" : `:${p}`}`;
  return fc.oneof(
    fc.constant(uri),
    fc.option(port).map((p) => `${scheme}://${authority(p)}${rest}`),
    fc.constantFrom(...LOOPBACK_HOSTS).map((h) => `${scheme}://${h}${rest}`),
    fc.constantFrom("/", "?", "#f", "x", "/..", "%20", " ", "\t").map((s) => uri + s),
    fc.constant(uri.toUpperCase()),
    fc.constant(uri.replace(/^http:/, "https:")),
    fc.constant(uri.replace("://", "://user@")),
    fc.nat(uri.length).map((cut) => uri.slice(0, cut)),
    hostileText,
  );
};

Deno.test("fuzz redirect URIs: matching is reflexive and symmetric and never throws", () => {
  fc.assert(
    fc.property(registered.chain((r) => fc.tuple(fc.constant(r), presentedFor(r))), ([r, p]) => {
      redirectUriProblem(r);
      redirectUriProblem(p);
      assert.ok(redirectUriMatches(r, r));
      assert.equal(redirectUriMatches(r, p), redirectUriMatches(p, r));
    }),
    fuzzRuns(3000),
  );
});

Deno.test("fuzz redirect URIs: an accepted URI differs from the registered one at most in the loopback port", () => {
  const pairs = registered
    .filter((r) => redirectUriProblem(r) === null)
    .chain((r) => fc.tuple(fc.constant(r), presentedFor(r)));
  fc.assert(
    fc.property(pairs, ([r, p]) => {
      if (!redirectUriMatches(r, p)) return;
      // What the server would redirect to must itself be a URI it accepts for registration.
      assert.equal(redirectUriProblem(p), null, `${JSON.stringify(p)} matched ${r}`);
      if (p === r) return;
      const a = _split(r);
      const b = _split(p);
      assert.equal(a.scheme, "http");
      assert.ok(LOOPBACK_HOSTS.includes(a.host), `${a.host} is not a loopback host`);
      assert.deepEqual({ ...b, port: null }, { ...a, port: null });
    }),
    fuzzRuns(3000),
  );
});

Deno.test("fuzz redirect URIs: on loopback http any valid port is accepted", () => {
  const loopback = fc.record({
    host: fc.constantFrom(...LOOPBACK_HOSTS),
    registeredPort: fc.option(fc.integer({ min: 1, max: 65535 })),
    presentedPort: fc.integer({ min: 1, max: 65535 }),
    rest: fc.constantFrom("/cb", "/", "", "/cb?x=1"),
  });
  fc.assert(
    fc.property(loopback, ({ host, registeredPort, presentedPort, rest }) => {
      const r = `http://${host}${registeredPort === null ? "" : `:${registeredPort}`}${rest}`;
      assert.equal(redirectUriProblem(r), null);
      assert.ok(redirectUriMatches(r, `http://${host}:${presentedPort}${rest}`));
    }),
    fuzzRuns(1000),
  );
});

const API_URLS = [
  "https://api.example.com",
  "http://127.0.0.1:8002",
  "http://[::1]:9000",
  "https://api.example.com:8443",
];

/** The configured resource written another way: case of scheme and host, explicit ports. */
const sameResource = (apiUrl: string): fc.Arbitrary<string> => {
  const url = new URL(apiUrl);
  const ports = url.port === "" ? ["", ":", ":443", ":0443"] : [`:${url.port}`];
  const recase = (s: string) =>
    fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length })
      .map((upper) => [...s].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));
  return fc.tuple(
    recase(url.protocol.slice(0, -1)),
    recase(url.hostname),
    fc.constantFrom(...ports),
  ).map(([scheme, host, port]) => `${scheme}://${host}${port}`);
};

/**
 * What may follow the authority: only nothing or "/" keeps the resource. A leading ":" would
 * spell a port, which sameResource covers.
 */
const suffix = fc.oneof(
  fc.constantFrom("", "/"),
  fc.constantFrom("/api/mcp", "//", "/.", "/%2e", "?", "?a=b", "#", "#f", "/?", "\\", "."),
  hostileText.filter((s) => !s.startsWith(":")),
);

Deno.test("fuzz resource: anything but the origin, a trailing slash and case is invalid_target", () => {
  const cases = fc.constantFrom(...API_URLS).chain((apiUrl) =>
    fc.record({ apiUrl: fc.constant(apiUrl), same: sameResource(apiUrl), suffix })
  );
  fc.assert(
    fc.property(cases, ({ apiUrl, same, suffix }) => {
      const check = canonicalResource(same + suffix, { apiUrl });
      const expected = suffix === "" || suffix === "/";
      assert.equal(check.ok, expected, `${JSON.stringify(same + suffix)} for ${apiUrl}`);
      if (check.ok) assert.equal(check.resource, apiUrl);
      else assert.equal(check.description, `"resource" must equal ${JSON.stringify(apiUrl)}`);
    }),
    fuzzRuns(3000),
  );
});

Deno.test("fuzz resource: canonicalisation is idempotent and yields only the configured value", () => {
  const raw = fc.oneof(
    fc.constantFrom(...API_URLS).map((url) => url.replace(/:\/\/[^.:]+/, "://other")),
    fc.constantFrom(...API_URLS).chain((apiUrl) =>
      fc.tuple(sameResource(apiUrl), suffix).map(([a, b]) => a + b)
    ),
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    hostileText,
  );
  fc.assert(
    fc.property(fc.constantFrom(...API_URLS), raw, (apiUrl, value) => {
      const check = canonicalResource(value, { apiUrl });
      if (!check.ok) return;
      assert.equal(new URL(value).origin, apiUrl, `${JSON.stringify(value)} names another origin`);
      assert.equal(check.resource, apiUrl);
      assert.deepEqual(canonicalResource(check.resource, { apiUrl }), check);
    }),
    fuzzRuns(3000),
  );
});
