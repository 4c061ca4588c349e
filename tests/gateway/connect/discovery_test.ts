// Discovery of an upstream's authorization server against small servers on loopback: the
// orders MCP prescribes and the checks that refuse a document. The SSRF boundary and the
// time budget are in discovery_ssrf_test.ts.
import assert from "node:assert/strict";
import {
  discoverAuthorization,
  parseBearerChallenge,
} from "../../../src/gateway/connect/discovery.ts";
import {
  json,
  loopback,
  OAUTH_AS,
  PRM,
  resourceMetadata,
  serveFake,
  serverMetadata,
  twoServers,
} from "./fakes.ts";

const OIDC = "/.well-known/openid-configuration";

Deno.test("parseBearerChallenge reads the Bearer challenge among others", async (t) => {
  const cases: [string, string | null, ReturnType<typeof parseBearerChallenge>][] = [
    [
      "quoted parameters",
      'Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", scope="files:read files:write"',
      {
        resourceMetadata: "https://mcp.example/.well-known/oauth-protected-resource",
        scope: "files:read files:write",
        error: null,
      },
    ],
    [
      "unquoted parameters, a URL among them",
      "Bearer resource_metadata=https://mcp.example/prm, scope=files:read,error=invalid_token",
      { resourceMetadata: "https://mcp.example/prm", scope: "files:read", error: "invalid_token" },
    ],
    [
      "several parameters with spaces, escapes and any letter case",
      'bearer realm="a \\"b\\"" , Error = "invalid_token", error_description="expired, sorry", RESOURCE_METADATA="https://m.example/x"',
      { resourceMetadata: "https://m.example/x", scope: null, error: "invalid_token" },
    ],
    [
      "after another scheme's parameters",
      'Basic realm="files", Bearer resource_metadata="https://m.example/x"',
      { resourceMetadata: "https://m.example/x", scope: null, error: null },
    ],
    [
      "after another scheme's token68",
      'Negotiate YWJjZA==, Bearer scope="a b"',
      { resourceMetadata: null, scope: "a b", error: null },
    ],
    [
      "the first Bearer challenge of two",
      'Bearer scope="first", Bearer scope="second"',
      { resourceMetadata: null, scope: "first", error: null },
    ],
    ["a bare Bearer", "Bearer", { resourceMetadata: null, scope: null, error: null }],
    ["only other schemes", 'Basic realm="x", DPoP algs="ES256"', null],
    ["no header", null, null],
    ["garbage", '"=,;', null],
  ];
  for (const [name, header, expected] of cases) {
    await t.step(name, () => assert.deepEqual(parseBearerChallenge(header), expected));
  }
});

Deno.test("discovery finds the authorization server in MCP's orders", async (t) => {
  await t.step(
    "the challenge's resource_metadata is used, the well-known URIs never asked",
    async () => {
      const { upstream, as, close } = twoServers((issuer) => ({
        "/meta/prm": json((o) => resourceMetadata(`${o}/mcp`, issuer, { scopes_supported: ["s"] })),
      }));
      try {
        const result = await discoverAuthorization(
          `${upstream.origin}/mcp`,
          `Bearer resource_metadata="${upstream.origin}/meta/prm", scope="files:read files:write"`,
          loopback,
        );
        assert.deepEqual(result, {
          ok: true,
          value: {
            resource: `${upstream.origin}/mcp`,
            scopes: ["files:read", "files:write"],
            server: {
              issuer: as.origin,
              authorizationEndpoint: `${as.origin}/authorize`,
              tokenEndpoint: `${as.origin}/token`,
              registrationEndpoint: `${as.origin}/register`,
              revocationEndpoint: `${as.origin}/revoke`,
              clientIdMetadataDocumentSupported: false,
              issParameterSupported: false,
              tokenEndpointAuthMethods: ["none", "client_secret_basic"],
            },
          },
        });
        assert.deepEqual(upstream.seen.map((r) => r.path), ["/meta/prm"]);
        assert.deepEqual(as.seen.map((r) => r.path), [OAUTH_AS]);
      } finally {
        await close();
      }
    },
  );

  await t.step("without a challenge the path-inserted URI comes first", async () => {
    const { upstream, close } = twoServers((issuer) => ({
      [`${PRM}/public/mcp`]: json((o) =>
        resourceMetadata(`${o}/public/mcp`, issuer, { scopes_supported: ["a", "b"] })
      ),
      [PRM]: json(() => ({ wrong: "document" })),
    }));
    try {
      const result = await discoverAuthorization(`${upstream.origin}/public/mcp`, null, loopback);
      assert.equal(result.ok, true);
      // No challenge scope: the metadata's scopes_supported.
      assert.deepEqual(result.ok && result.value.scopes, ["a", "b"]);
      assert.deepEqual(upstream.seen.map((r) => r.path), [`${PRM}/public/mcp`]);
    } finally {
      await close();
    }
  });

  await t.step("then the root URI, when the path-inserted one is not found", async () => {
    const { upstream, close } = twoServers((issuer) => ({
      [PRM]: json((o) => resourceMetadata(`${o}/mcp`, issuer)),
    }));
    try {
      const result = await discoverAuthorization(`${upstream.origin}/mcp`, null, loopback);
      assert.equal(result.ok, true);
      assert.deepEqual(result.ok && result.value.scopes, []);
      assert.deepEqual(upstream.seen.map((r) => r.path), [`${PRM}/mcp`, PRM]);
    } finally {
      await close();
    }
  });

  await t.step(
    "a challenge without resource_metadata falls back too, and lends its scope",
    async () => {
      const { upstream, close } = twoServers((issuer) => ({
        [PRM]: json((o) => resourceMetadata(o, issuer, { scopes_supported: ["wide"] })),
      }));
      try {
        const result = await discoverAuthorization(
          upstream.origin,
          'Bearer scope="narrow"',
          loopback,
        );
        assert.deepEqual(result.ok && result.value.scopes, ["narrow"]);
        assert.deepEqual(upstream.seen.map((r) => r.path), [PRM]);
      } finally {
        await close();
      }
    },
  );

  const issuerOrders: [string, string, string[]][] = [
    ["an issuer without a path: OAuth, then OpenID", "", [OAUTH_AS, OIDC]],
    [
      "an issuer with a path: OAuth inserted, OpenID inserted, OpenID appended",
      "/tenant1",
      [`${OAUTH_AS}/tenant1`, `${OIDC}/tenant1`, `/tenant1${OIDC}`],
    ],
  ];
  for (const [name, path, order] of issuerOrders) {
    for (let served = 0; served < order.length; served++) {
      await t.step(`${name}: found at try ${served + 1}`, async () => {
        const { upstream, as, close } = twoServers(
          (origin) => ({ [PRM]: json((o) => resourceMetadata(o, origin + path)) }),
          { [order[served]!]: json((o) => serverMetadata(o + path)) },
        );
        try {
          const result = await discoverAuthorization(upstream.origin, null, loopback);
          assert.equal(result.ok && result.value.server.issuer, as.origin + path);
          assert.deepEqual(as.seen.map((r) => r.path), order.slice(0, served + 1));
        } finally {
          await close();
        }
      });
    }
  }

  await t.step("nothing found anywhere says where it looked", async () => {
    const upstream = serveFake({});
    try {
      const result = await discoverAuthorization(`${upstream.origin}/mcp`, null, loopback);
      assert.deepEqual(result, {
        ok: false,
        problem: `No protected-resource metadata for ${upstream.origin}/mcp at ` +
          `${upstream.origin}${PRM}/mcp or ${upstream.origin}${PRM}`,
      });
    } finally {
      await upstream.close();
    }
  });
});

Deno.test("discovery refuses documents that do not check out", async (t) => {
  const refusals: [
    string,
    (issuer: string, o: string) => unknown,
    Record<string, unknown>,
    RegExp,
  ][] = [
    [
      "a resource that is another URL",
      (issuer, o) => resourceMetadata(`${o}/other`, issuer),
      {},
      /names the resource http:\/\/127\.0\.0\.1:\d+\/other, not the upstream's URL/,
    ],
    [
      "a resource with a trailing slash the upstream URL has not",
      (issuer, o) => resourceMetadata(`${o}/mcp/`, issuer),
      {},
      /names the resource .*\/mcp\/, not/,
    ],
    [
      "no resource",
      (issuer) => ({ authorization_servers: [issuer] }),
      {},
      /^The protected-resource metadata at 127\.0\.0\.1:\d+: "resource" is missing$/,
    ],
    [
      "an authorization server metadata without a token endpoint",
      (issuer, o) => resourceMetadata(`${o}/mcp`, issuer),
      { token_endpoint: undefined },
      /^The authorization server metadata at 127\.0\.0\.1:\d+: "token_endpoint" is missing$/,
    ],
    [
      "no authorization server",
      (_issuer, o) => ({ resource: `${o}/mcp`, authorization_servers: [] }),
      {},
      /: "authorization_servers": must name at least one authorization server$/,
    ],
    [
      "an issuer that lies about who it is",
      (issuer, o) => resourceMetadata(`${o}/mcp`, issuer),
      { issuer: "https://honest.example" },
      /names the issuer https:\/\/honest\.example, not http:\/\/127\.0\.0\.1:\d+, so it is not used/,
    ],
    [
      "no PKCE at all",
      (issuer, o) => resourceMetadata(`${o}/mcp`, issuer),
      { code_challenge_methods_supported: undefined },
      /does not offer PKCE with S256, which MCP requires/,
    ],
    [
      "PKCE without S256",
      (issuer, o) => resourceMetadata(`${o}/mcp`, issuer),
      { code_challenge_methods_supported: ["plain"] },
      /does not offer PKCE with S256/,
    ],
    [
      "an endpoint that is not an absolute URL",
      (issuer, o) => resourceMetadata(`${o}/mcp`, issuer),
      { token_endpoint: "/token" },
      /^Refused the token endpoint "\/token": not an absolute URL$/,
    ],
  ];
  for (const [name, prm, asExtra, message] of refusals) {
    await t.step(name, async () => {
      const { upstream, close } = twoServers(
        (issuer) => ({ [PRM]: json((o) => prm(issuer, o)) }),
        { [OAUTH_AS]: json((o) => ({ ...serverMetadata(o), ...asExtra })) },
      );
      try {
        const result = await discoverAuthorization(`${upstream.origin}/mcp`, null, loopback);
        assert.equal(result.ok, false);
        assert.match(result.ok ? "" : result.problem, message);
      } finally {
        await close();
      }
    });
  }

  await t.step(
    "a resource that is the upstream's origin or a path prefix of it is asked for as it is named",
    async () => {
      for (const named of ["", "/", "/api"]) {
        const { upstream, close } = twoServers((issuer) => ({
          [PRM]: json((o) => resourceMetadata(`${o}${named}`, issuer)),
        }));
        try {
          const result = await discoverAuthorization(`${upstream.origin}/api/mcp`, null, loopback);
          assert.equal(result.ok && result.value.resource, `${upstream.origin}${named}`, named);
        } finally {
          await close();
        }
      }
    },
  );

  await t.step("a resource that only starts like the upstream's path is another one", async () => {
    for (const named of ["/ap", "/api/mcp/more", "/api/mcp?x=1"]) {
      const { upstream, close } = twoServers((issuer) => ({
        [PRM]: json((o) => resourceMetadata(`${o}${named}`, issuer)),
      }));
      try {
        const result = await discoverAuthorization(`${upstream.origin}/api/mcp`, null, loopback);
        assert.match(result.ok ? "" : result.problem, /names the resource .*, not the upstream/);
      } finally {
        await close();
      }
    }
  });

  await t.step("the letter case of scheme and host is no mismatch", async () => {
    const { upstream, close } = twoServers((issuer) => ({
      [PRM]: json((o) => resourceMetadata(`${o.replace("http", "HTTP")}/mcp`, issuer)),
    }));
    try {
      const result = await discoverAuthorization(`${upstream.origin}/mcp`, null, loopback);
      assert.equal(result.ok, true);
    } finally {
      await close();
    }
  });

  await t.step("a redirect is not followed", async () => {
    const { upstream, as, close } = twoServers((issuer) => ({
      "/prm": (_r, o) => Response.redirect(`${o}/real-prm`, 302),
      "/real-prm": json((o) => resourceMetadata(o, issuer)),
    }));
    try {
      const result = await discoverAuthorization(
        upstream.origin,
        `Bearer resource_metadata="${upstream.origin}/prm"`,
        loopback,
      );
      assert.deepEqual(result, {
        ok: false,
        problem: `The protected-resource metadata at ${new URL(upstream.origin).host} redirects, ` +
          "which are not followed",
      });
      assert.deepEqual(upstream.seen.map((r) => r.path), ["/prm"]);
      assert.equal(as.seen.length, 0);
    } finally {
      await close();
    }
  });

  await t.step("a body over 64 KiB, streamed without Content-Length", async () => {
    const { upstream, close } = twoServers((issuer) => ({
      [PRM]: (_r, o) => {
        const doc = JSON.stringify({ ...resourceMetadata(o, issuer), pad: "x".repeat(70_000) });
        return new Response(new Blob([doc]).stream(), {
          headers: { "Content-Type": "application/json" },
        });
      },
    }));
    try {
      const result = await discoverAuthorization(upstream.origin, null, loopback);
      assert.deepEqual(result, {
        ok: false,
        problem: `The protected-resource metadata at ${
          new URL(upstream.origin).host
        } answered more than 65536 bytes`,
      });
    } finally {
      await close();
    }
  });

  await t.step("an answer that is not JSON", async () => {
    const upstream = serveFake({ [PRM]: () => new Response("<html>hello</html>") });
    try {
      const result = await discoverAuthorization(upstream.origin, null, loopback);
      assert.match(
        result.ok ? "" : result.problem,
        /answered 200 with text\/plain, not JSON$/,
      );
    } finally {
      await upstream.close();
    }
  });

  await t.step("an outage ends the search instead of trying the next URI", async () => {
    const upstream = serveFake({ [`${PRM}/mcp`]: () => new Response("down", { status: 503 }) });
    try {
      const result = await discoverAuthorization(`${upstream.origin}/mcp`, null, loopback);
      assert.match(result.ok ? "" : result.problem, /answered 503 with text\/plain, not JSON$/);
      assert.equal(upstream.seen.length, 1);
    } finally {
      await upstream.close();
    }
  });
});
