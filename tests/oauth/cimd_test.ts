// Client metadata document fetching with injected fetch and DNS: the SSRF defences.
import { DEFAULT_RATE_LIMITS } from "../../src/config/rate_limit_table.ts";
import assert from "node:assert/strict";
import { createRateLimiter, UNLIMITED } from "../../src/http/rate_limiter.ts";
import { createMetadataDocuments } from "../../src/oauth/cimd.ts";
import { manualClock } from "../store/store_contract.ts";
import { SPEC_SCOPES } from "../../src/oauth/scopes.ts";

const URL_ = "https://client.example/oauth/client.json";
const doc = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: URL_,
    client_name: "Example",
    redirect_uris: ["https://client.example/cb"],
    ...extra,
  });

function setup(options: {
  dns?: Record<string, string[]>;
  respond?: (url: string, init?: RequestInit) => Promise<Response> | Response;
  rateLimits?: boolean;
} = {}) {
  const clock = manualClock();
  const calls: { url: string; init?: RequestInit }[] = [];
  const dnsSignals: AbortSignal[] = [];
  const documents = createMetadataDocuments({
    config: { cimdAllowLoopback: false },
    now: clock.now,
    budget: options.rateLimits
      ? createRateLimiter({ ...DEFAULT_RATE_LIMITS.cimd, now: clock.now })
      : UNLIMITED,
    scopes: SPEC_SCOPES,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      calls.push({ url: String(input), ...(init ? { init } : {}) });
      return await (options.respond ?? (() => new Response(doc())))(String(input), init);
    }) as typeof fetch,
    resolveDns: (host, type, signal) => {
      dnsSignals.push(signal);
      const all = options.dns?.[host] ?? ["93.184.216.34"];
      return Promise.resolve(all.filter((a) => (type === "AAAA") === a.includes(":")));
    },
  });
  return { documents, calls, clock, dnsSignals };
}

Deno.test("metadata documents: SSRF defences", async (t) => {
  await t.step("a good document, fetched without following redirects, with a timeout", async () => {
    const { documents, calls } = setup();
    const result = await documents.resolve(URL_);
    assert.equal(result.ok, true);
    assert.equal(calls[0]!.init?.redirect, "manual");
    assert.ok(calls[0]!.init?.signal instanceof AbortSignal);
  });
  await t.step(
    "the DNS lookup spends the fetch's time budget, not a budget of its own",
    async () => {
      const { documents, calls, dnsSignals } = setup();
      await documents.resolve(URL_);
      assert.equal(dnsSignals.length, 2);
      for (const signal of dnsSignals) assert.equal(signal, calls[0]!.init?.signal);
    },
  );
  const refused: [string, Parameters<typeof setup>[0], string, RegExp][] = [
    ["a private address", { dns: { "client.example": ["10.0.0.5"] } }, URL_, /private address/],
    [
      "a link-local (metadata service) address",
      { dns: { "client.example": ["169.254.169.254"] } },
      URL_,
      /private address/,
    ],
    [
      "one bad address among good ones",
      { dns: { "client.example": ["93.184.216.34", "::1"] } },
      URL_,
      /loopback address/,
    ],
    ["loopback without the switch", {}, "https://127.0.0.1/c.json", /loopback address/],
    ["an IPv6 literal in a private range", {}, "https://[fd00::1]/c.json", /private address/],
    ["a 6to4 literal of 127.0.0.1", {}, "https://[2002:7f00:1::]/c.json", /loopback address/],
    [
      "a Teredo address whose client is private",
      { dns: { "client.example": ["2001:0:808:808::f5ff:fffe"] } },
      URL_,
      /private address/,
    ],
    ["http", {}, "http://client.example/c.json", /must be an https URL/],
    ["no path", {}, "https://client.example/", /must have a path/],
    ["userinfo", {}, "https://u:p@client.example/c.json", /userinfo/],
    ["a fragment", {}, "https://client.example/c.json#x", /not a valid URL/],
    ["dot segments", {}, "https://client.example/a/%2e%2e/c.json", /dot segments/],
    ["an unresolvable host", { dns: { "client.example": [] } }, URL_, /does not resolve/],
  ];
  for (const [name, options, url, message] of refused) {
    await t.step(`refuses ${name} without fetching`, async () => {
      const { documents, calls } = setup(options);
      const result = await documents.resolve(url);
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.description, message);
      assert.equal(calls.length, 0);
    });
  }
  await t.step("a body over 5 KiB, even without Content-Length", async () => {
    const big = doc({ padding: "x".repeat(6000) });
    const { documents } = setup({
      respond: () => new Response(new Blob([big]).stream()),
    });
    const result = await documents.resolve(URL_);
    assert.deepEqual(result, {
      ok: false,
      description: "The client metadata document exceeds 5120 bytes",
    });
  });
  await t.step("a fetch that fails or times out", async () => {
    const { documents } = setup({
      respond: () => Promise.reject(new DOMException("timeout", "TimeoutError")),
    });
    assert.deepEqual(await documents.resolve(URL_), {
      ok: false,
      description: "The client metadata document could not be fetched",
    });
  });
  await t.step("the time budget is 5 s: a fetch that never answers ends with it", async () => {
    // The platform's timer stands in for 5 real seconds: what the lookup asks of it, and the
    // signal it returns, fired here by hand.
    const timeout = AbortSignal.timeout;
    const asked: number[] = [];
    const timer = new AbortController();
    AbortSignal.timeout = (ms: number) => {
      asked.push(ms);
      return timer.signal;
    };
    try {
      let fetched!: () => void;
      const fetching = new Promise<void>((resolve) => fetched = resolve);
      const { documents, calls } = setup({
        respond: (_url, init) => {
          fetched();
          return new Promise((_, reject) => {
            init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason));
          });
        },
      });
      const lookup = documents.resolve(URL_);
      await fetching;
      assert.deepEqual(asked, [5_000]);
      assert.equal(calls[0]!.init?.signal, timer.signal);
      timer.abort(new DOMException("timeout", "TimeoutError"));
      assert.deepEqual(await lookup, {
        ok: false,
        description: "The client metadata document could not be fetched",
      });
    } finally {
      AbortSignal.timeout = timeout;
    }
  });
  await t.step("cached per Cache-Control, refetched after", async () => {
    const { documents, calls, clock } = setup({
      respond: () => new Response(doc(), { headers: { "Cache-Control": "max-age=60" } }),
    });
    await documents.resolve(URL_);
    await documents.resolve(URL_);
    assert.equal(calls.length, 1);
    clock.advance(61_000);
    await documents.resolve(URL_);
    assert.equal(calls.length, 2);
  });
  await t.step("no-store is not cached", async () => {
    const { documents, calls } = setup({
      respond: () => new Response(doc(), { headers: { "Cache-Control": "no-store" } }),
    });
    await documents.resolve(URL_);
    await documents.resolve(URL_);
    assert.equal(calls.length, 2);
  });
  await t.step("a per-origin fetch budget", async () => {
    const { documents, calls } = setup({
      rateLimits: true,
      respond: () => new Response(doc(), { headers: { "Cache-Control": "no-store" } }),
    });
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await documents.resolve(URL_));
    assert.equal(calls.length, 5);
    assert.match(
      results.at(-1)!.ok ? "" : (results.at(-1) as { description: string }).description,
      /Too many/,
    );
  });
});
