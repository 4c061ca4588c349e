// Discovery: the one metadata document at every location, JWKS, and CORS of the endpoints.
import assert from "node:assert/strict";
import { createProcessServices } from "../../../src/process_services.ts";
import { authSiteRoutes } from "../../../src/sites/auth_site.ts";
import { createCorsPolicies } from "../../../src/http/cors.ts";
import type { RouteTable } from "../../../src/http/router.ts";
import { checkMetadataRoutes, createMetadataHandler } from "../../../src/oauth/metadata.ts";
import { SPEC_SCOPES, SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { createSigningKeys } from "../../../src/oauth/signing_keys.ts";
import { loadStylesheet } from "../../../src/ui/stylesheet.ts";
import { createWorkspaceServices } from "../../../src/workspace/domain/services.ts";
import { oauthFixture } from "../support/oauth_helpers.ts";

const LOCATIONS = [
  "/.well-known/oauth-authorization-server/api/auth",
  "/api/auth/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration/api/auth",
  "/api/auth/.well-known/openid-configuration",
];

/** Sends a raw HTTP/1.1 request, so that Host can be anything. */
async function rawGet(origin: string, path: string, host: string): Promise<string> {
  const url = new URL(origin);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  await conn.write(new TextEncoder().encode(
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
  ));
  let text = "";
  const buffer = new Uint8Array(65536);
  for (;;) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
  conn.close();
  return text;
}

Deno.test("authorization-server metadata", async (t) => {
  const fx = await oauthFixture();
  const auth = fx.auth;
  try {
    const bodies: string[] = [];
    await t.step("the same document answers at every location", async () => {
      for (const path of LOCATIONS) {
        const response = await fetch(`${auth}${path}`);
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get("Content-Type"), "application/json");
        assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
        bodies.push(await response.text());
      }
      assert.equal(new Set(bodies).size, 1);
    });
    await t.step("it lists what RFC 8414 and the issue ask for", () => {
      const doc = JSON.parse(bodies[0]!);
      assert.equal(doc.issuer, `${auth}/api/auth`);
      assert.equal(doc.authorization_endpoint, `${auth}/api/auth/oauth2/authorize`);
      assert.equal(doc.token_endpoint, `${auth}/api/auth/oauth2/token`);
      assert.equal(doc.registration_endpoint, `${auth}/api/auth/oauth2/register`);
      assert.equal(doc.revocation_endpoint, `${auth}/api/auth/oauth2/revoke`);
      assert.equal(doc.jwks_uri, `${auth}/api/auth/jwks`);
      assert.deepEqual(doc.scopes_supported, SUPPORTED_SCOPES);
      assert.equal(doc.scopes_supported.length, 25);
      assert.deepEqual(doc.response_types_supported, ["code"]);
      assert.deepEqual(doc.grant_types_supported, ["authorization_code", "refresh_token"]);
      assert.deepEqual(doc.code_challenge_methods_supported, ["S256"]);
      assert.deepEqual(doc.token_endpoint_auth_methods_supported, [
        "none",
        "client_secret_basic",
        "client_secret_post",
      ]);
      assert.equal(doc.authorization_response_iss_parameter_supported, true);
      assert.equal(doc.client_id_metadata_document_supported, true);
      assert.deepEqual(doc.id_token_signing_alg_values_supported, ["ES256"]);
      assert.deepEqual(doc.subject_types_supported, ["public"]);
    });
    await t.step("ETag and 304", async () => {
      const first = await fetch(`${auth}${LOCATIONS[0]}`);
      await first.body?.cancel();
      const again = await fetch(`${auth}${LOCATIONS[0]}`, {
        headers: { "If-None-Match": first.headers.get("ETag")! },
      });
      assert.equal(again.status, 304);
      await again.body?.cancel();
    });
    await t.step("a hostile Host is refused; forwarded hosts change nothing", async () => {
      const raw = await rawGet(auth, LOCATIONS[0]!, "evil.example");
      assert.match(raw, /^HTTP\/1.1 421/);
      assert.ok(!raw.includes("evil.example/api/auth"));
      const forwarded = await fetch(`${auth}${LOCATIONS[0]}`, {
        headers: { "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https" },
      });
      assert.equal(await forwarded.text(), bodies[0]);
    });
    await t.step("preflight on metadata and JWKS answers any origin", async () => {
      for (const path of [LOCATIONS[0]!, "/api/auth/jwks"]) {
        const response = await fetch(`${auth}${path}`, {
          method: "OPTIONS",
          headers: { Origin: "https://agent.example", "Access-Control-Request-Method": "GET" },
        });
        await response.body?.cancel();
        assert.equal(response.status, 204);
        assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
        assert.equal(response.headers.get("Access-Control-Allow-Credentials"), null);
      }
    });
    await t.step("JWKS publishes the public signing key with its kid", async () => {
      const response = await fetch(`${auth}/api/auth/jwks`);
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
      const jwks = await response.json();
      assert.equal(jwks.keys.length, 1);
      const [key] = jwks.keys;
      assert.equal(key.kty, "EC");
      assert.equal(key.crv, "P-256");
      assert.equal(key.alg, "ES256");
      assert.equal(typeof key.kid, "string");
      assert.equal(key.d, undefined);
    });
    await t.step("token endpoint CORS: trusted origins only, never credentials", async () => {
      const post = (origin: string) =>
        fetch(`${auth}/api/auth/oauth2/token`, {
          method: "POST",
          headers: { Origin: origin, "Content-Type": "application/x-www-form-urlencoded" },
          body: "grant_type=refresh_token&refresh_token=x&client_id=x",
        });
      const trusted = await post(fx.server.baseUrl);
      await trusted.body?.cancel();
      assert.equal(trusted.headers.get("Access-Control-Allow-Origin"), fx.server.baseUrl);
      assert.equal(trusted.headers.get("Access-Control-Allow-Credentials"), null);
      for (const name of ["WWW-Authenticate", "Retry-After"]) {
        assert.match(trusted.headers.get("Access-Control-Expose-Headers")!, new RegExp(name));
      }
      const stranger = await post("https://evil.example");
      await stranger.body?.cancel();
      assert.equal(stranger.headers.get("Access-Control-Allow-Origin"), null);
      const preflight = await fetch(`${auth}/api/auth/oauth2/token`, {
        method: "OPTIONS",
        headers: { Origin: fx.server.baseUrl, "Access-Control-Request-Method": "POST" },
      });
      await preflight.body?.cancel();
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), fx.server.baseUrl);
      assert.match(preflight.headers.get("Access-Control-Allow-Methods")!, /POST/);
    });
    await t.step("registration answers any origin", async () => {
      const preflight = await fetch(`${auth}/api/auth/oauth2/register`, {
        method: "OPTIONS",
        headers: { Origin: "https://agent.example", "Access-Control-Request-Method": "POST" },
      });
      await preflight.body?.cancel();
      assert.equal(preflight.headers.get("Access-Control-Allow-Origin"), "*");
      const answer = await fetch(`${auth}/api/auth/oauth2/register`, {
        method: "POST",
        headers: { Origin: "https://agent.example", "Content-Type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["https://agent.example/cb"] }),
      });
      await answer.body?.cancel();
      assert.equal(answer.status, 201);
      assert.equal(answer.headers.get("Access-Control-Allow-Origin"), "*");
      assert.equal(answer.headers.get("Access-Control-Allow-Credentials"), null);
      assert.match(answer.headers.get("Access-Control-Expose-Headers")!, /Retry-After/);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("the start-up self-check asks the route table for every location", async (t) => {
  const fx = await oauthFixture();
  const { config, store } = fx.server;
  const now = fx.clock.now;
  const services = createProcessServices({ config, store, now, mailLog: () => {} });
  const routes = await authSiteRoutes({
    config,
    store,
    now,
    log: () => {},
    ...services,
    keys: createSigningKeys({ store, now }),
    workspace: createWorkspaceServices({ ...services, store, now, authUrl: config.authUrl }),
    cors: createCorsPolicies(config.trustedOrigins),
    stylesheet: await loadStylesheet(),
    scopes: SPEC_SCOPES,
  });
  const refused = (table: RouteTable, why: RegExp) =>
    assert.rejects(() => checkMetadataRoutes(config, table, SPEC_SCOPES), why);
  try {
    await t.step("the real table passes", async () => {
      await checkMetadataRoutes(config, routes, SPEC_SCOPES);
    });
    await t.step("a location serving another document stops start-up", async () => {
      const other = await createMetadataHandler(
        { ...config, authUrl: "https://other.example" },
        SPEC_SCOPES,
      );
      await refused(
        { ...routes, [LOCATIONS[2]!]: { GET: other } },
        /\/\.well-known\/openid-configuration\/api\/auth serves another document/,
      );
    });
    await t.step("a location nobody serves stops start-up", async () => {
      const { [LOCATIONS[3]!]: _gone, ...rest } = routes;
      await refused(rest, /nothing answers GET \/api\/auth\/\.well-known\/openid-configuration/);
    });
    await t.step("an endpoint the document names but nobody serves stops start-up", async () => {
      const { "/api/auth/oauth2/revoke": _gone, ...rest } = routes;
      await refused(rest, /revocation_endpoint .* is not served/);
    });
  } finally {
    await fx.close();
  }
});
