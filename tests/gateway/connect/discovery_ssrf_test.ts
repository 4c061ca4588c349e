// Discovery's SSRF boundary: URLs it refuses without fetching them, on private addresses,
// over http or with userinfo, and the one time budget a fetch and its host lookup share.
import assert from "node:assert/strict";
import {
  discoverAuthorization,
  type DiscoveryDeps,
} from "../../../src/gateway/connect/discovery.ts";
import {
  fakeDns,
  json,
  loopback,
  OAUTH_AS,
  PRM,
  recordingFetch,
  recordTimeouts,
  resourceMetadata,
  serveFake,
  serverMetadata,
  twoServers,
} from "./fakes.ts";

Deno.test("discovery keeps the SSRF boundary and fetches nothing it refuses", async (t) => {
  const refused: [string, string, DiscoveryDeps, RegExp][] = [
    [
      "a private address literal",
      "https://10.0.0.1/prm",
      loopback,
      /^Refused the protected-resource metadata on 10\.0\.0\.1: the host resolves to a private address$/,
    ],
    [
      "the cloud metadata address",
      "https://169.254.169.254/latest/meta-data",
      loopback,
      /on 169\.254\.169\.254: the host resolves to a private address$/,
    ],
    [
      "a home-network address",
      "https://192.168.1.1/prm",
      loopback,
      /on 192\.168\.1\.1: the host resolves to a private address$/,
    ],
    [
      "a name that resolves to a private address",
      "https://metadata.example/prm",
      { allowLoopback: true, resolveDns: fakeDns({ "metadata.example": ["10.0.0.1"] }) },
      /on metadata\.example: the host resolves to a private address$/,
    ],
    [
      "a name with one private address among public ones",
      "https://metadata.example/prm",
      {
        allowLoopback: true,
        resolveDns: fakeDns({ "metadata.example": ["93.184.216.34", "fd00::1"] }),
      },
      /on metadata\.example: the host resolves to a private address$/,
    ],
    [
      "a name that does not resolve",
      "https://nowhere.example/prm",
      loopback,
      /on nowhere\.example: the host does not resolve$/,
    ],
    [
      "http on a public host",
      "http://metadata.example/prm",
      { allowLoopback: true, resolveDns: fakeDns({ "metadata.example": ["93.184.216.34"] }) },
      /on metadata\.example: it must use https$/,
    ],
    [
      "http on loopback when loopback is not allowed",
      "http://127.0.0.1:9/prm",
      { allowLoopback: false },
      /on 127\.0\.0\.1:9: it must use https$/,
    ],
    [
      "https on loopback when loopback is not allowed",
      "https://localhost:9/prm",
      { allowLoopback: false },
      /on localhost:9: the host resolves to a loopback address$/,
    ],
    [
      "userinfo",
      "https://user:pw@metadata.example/prm",
      { allowLoopback: true, resolveDns: fakeDns({ "metadata.example": ["93.184.216.34"] }) },
      /on metadata\.example: it carries userinfo$/,
    ],
  ];
  for (const [name, prmUrl, deps, message] of refused) {
    await t.step(`a resource_metadata URL on ${name}`, async () => {
      const recording = recordingFetch();
      const result = await discoverAuthorization(
        "https://mcp.example/mcp",
        `Bearer resource_metadata="${prmUrl}"`,
        { ...deps, fetch: recording.fetch },
      );
      assert.equal(result.ok, false);
      assert.match(result.ok ? "" : result.problem, message);
      assert.deepEqual(recording.urls, []);
    });
  }

  await t.step("an authorization server on a private address is not asked", async () => {
    const recording = recordingFetch();
    const upstream = serveFake({
      [PRM]: json((o) => resourceMetadata(o, "https://idp.example")),
    });
    try {
      const result = await discoverAuthorization(upstream.origin, null, {
        allowLoopback: true,
        resolveDns: fakeDns({ "idp.example": ["192.168.1.1"] }),
        fetch: recording.fetch,
      });
      assert.deepEqual(result, {
        ok: false,
        problem: "Refused the authorization server metadata on idp.example: " +
          "the host resolves to a private address",
      });
      assert.deepEqual(recording.urls, [`${upstream.origin}${PRM}`]);
    } finally {
      await upstream.close();
    }
  });

  await t.step("an endpoint on a private address is refused", async () => {
    const { upstream, close } = twoServers(
      (issuer) => ({ [PRM]: json((o) => resourceMetadata(o, issuer)) }),
      {
        [OAUTH_AS]: json((o) => serverMetadata(o, { token_endpoint: "https://inner.example/t" })),
      },
    );
    try {
      const result = await discoverAuthorization(upstream.origin, null, {
        allowLoopback: true,
        resolveDns: fakeDns({ "inner.example": ["10.1.2.3"] }),
      });
      assert.deepEqual(result, {
        ok: false,
        problem:
          "Refused the token endpoint on inner.example: the host resolves to a private address",
      });
    } finally {
      await close();
    }
  });

  await t.step("the upstream's own origin is trusted as the operator wrote it", async () => {
    // An internal MCP server on 10.1.2.3 that serves its own metadata and authorization
    // server, reached here through a fetch that carries 10.1.2.3 to the loopback fake; with
    // loopback not allowed, nothing on another origin would pass.
    const internal = serveFake({
      [`${PRM}/mcp`]: json(() => resourceMetadata(`${origin}/mcp`, `${origin}/auth`)),
      [`${OAUTH_AS}/auth`]: json(() => serverMetadata(`${origin}/auth`)),
    });
    const origin = `http://10.1.2.3:${new URL(internal.origin).port}`;
    const recording = recordingFetch();
    try {
      const result = await discoverAuthorization(`${origin}/mcp`, null, {
        allowLoopback: false,
        resolveDns: () => Promise.reject(new Error("no lookups on the upstream's own origin")),
        fetch: (input, init) =>
          recording.fetch(String(input).replace("10.1.2.3", "127.0.0.1"), init),
      });
      assert.equal(result.ok && result.value.server.tokenEndpoint, `${origin}/token`);
      assert.deepEqual(internal.seen.map((r) => r.path), [`${PRM}/mcp`, `${OAUTH_AS}/auth`]);
    } finally {
      await internal.close();
    }
  });

  await t.step("another origin on the same private host is not the upstream's own", async () => {
    const recording = recordingFetch();
    const result = await discoverAuthorization(
      "http://10.1.2.3:8080/mcp",
      'Bearer resource_metadata="http://10.1.2.3:9090/prm"',
      { allowLoopback: true, fetch: recording.fetch },
    );
    assert.deepEqual(result, {
      ok: false,
      problem: "Refused the protected-resource metadata on 10.1.2.3:9090: it must use https",
    });
    assert.deepEqual(recording.urls, []);
  });
});

Deno.test("one 5 s budget covers a fetch's host lookup and the fetch itself", async () => {
  const signals: { dns: AbortSignal[]; fetch: AbortSignal[] } = { dns: [], fetch: [] };
  const asked = await recordTimeouts(() =>
    discoverAuthorization(
      "https://mcp.example/mcp",
      'Bearer resource_metadata="https://m.example/p"',
      {
        allowLoopback: false,
        resolveDns: (_host, type, signal) => {
          signals.dns.push(signal);
          return Promise.resolve(type === "A" ? ["93.184.216.34"] : []);
        },
        fetch: (_input, init) => {
          signals.fetch.push(init!.signal!);
          return Promise.reject(new TypeError("no network here"));
        },
      },
    )
  );
  assert.deepEqual(asked.map((a) => a.ms), [5000]);
  assert.deepEqual(signals.dns, [asked[0]!.signal, asked[0]!.signal]);
  assert.deepEqual(signals.fetch, [asked[0]!.signal]);
});
