// Dynamic client registration (RFC 7591) and Client ID Metadata Documents.
import assert from "node:assert/strict";
import { Browser } from "../support/accounts_browser.ts";
import { freePorts } from "../../../testkit/ports.ts";
import {
  authorizeParams,
  authorizeUrl,
  consent,
  exchange,
  oauthFixture,
  ownerBrowser,
  register,
  registerClient,
} from "../support/oauth_helpers.ts";

Deno.test("dynamic client registration", async (t) => {
  const fx = await oauthFixture();
  try {
    await t.step("a public client by default, with the server's fields", async () => {
      const { status, json, response } = await register(fx, {
        redirect_uris: ["https://app.example/cb"],
        client_name: "Agent",
        client_id: "chosen-by-me",
        client_secret: "chosen-too",
        client_id_issued_at: 1,
      });
      assert.equal(status, 201);
      assert.equal(response.headers.get("Cache-Control"), "no-store");
      assert.equal(response.headers.get("Access-Control-Allow-Origin"), "*");
      assert.notEqual(json.client_id, "chosen-by-me");
      assert.equal(json.client_secret, undefined);
      assert.equal(json.token_endpoint_auth_method, "none");
      assert.deepEqual(json.grant_types, ["authorization_code"]);
      assert.deepEqual(json.response_types, ["code"]);
      assert.equal(json.client_id_issued_at, Math.floor(fx.clock.now() / 1000));
    });
    await t.step("a confidential client's secret is shown once and stored hashed", async () => {
      const { json } = await register(fx, {
        redirect_uris: ["https://app.example/cb"],
        token_endpoint_auth_method: "client_secret_post",
      });
      const secret = String(json.client_secret);
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(json.client_secret_expires_at, 0);
      for await (const entry of fx.server.store.list([])) {
        assert.ok(!JSON.stringify(entry.value).includes(secret), "the secret is not stored");
      }
    });
    const accepted = [
      "https://app.example/cb",
      "https://app.example/cb?x=1",
      "http://127.0.0.1/cb",
      "http://127.0.0.1:8080/cb",
      "http://[::1]/cb",
      "http://localhost:3000/callback",
      "com.example.app:/oauth2redirect",
      "cursor://anysphere.cursor-mcp/oauth/callback",
    ];
    for (const uri of accepted) {
      await t.step(`accepts ${uri}`, async () => {
        const { status, json } = await register(fx, { redirect_uris: [uri] });
        assert.equal(status, 201, JSON.stringify(json));
      });
    }
    const refused = [
      "http://app.example/cb",
      "https://app.example/cb#frag",
      "https://*.example.com/cb",
      "https://app.example/*",
      "https://user:pass@app.example/cb",
      "https://user@app.example/cb",
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      " javascript:alert(1)",
      "java\tscript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "file:///etc/passwd",
      "FILE:///etc/passwd",
      "vbscript:msgbox",
      "/relative/cb",
      "",
      "http://127.0.0.1.evil.example/cb",
      "http://localhost.evil.example/cb",
    ];
    for (const uri of refused) {
      await t.step(`refuses ${JSON.stringify(uri)}`, async () => {
        const { status, json } = await register(fx, { redirect_uris: [uri] });
        assert.equal(status, 400);
        assert.equal(json.error, "invalid_redirect_uri", JSON.stringify(json));
      });
    }
    const badMetadata: [string, Record<string, unknown>, string][] = [
      ["no redirect_uris", { redirect_uris: undefined }, "invalid_redirect_uri"],
      ["empty redirect_uris", { redirect_uris: [] }, "invalid_redirect_uri"],
      ["implicit grant", { grant_types: ["implicit"] }, "invalid_client_metadata"],
      ["client_credentials", { grant_types: ["client_credentials"] }, "invalid_client_metadata"],
      ["refresh without code", { grant_types: ["refresh_token"] }, "invalid_client_metadata"],
      ["token response type", { response_types: ["token"] }, "invalid_client_metadata"],
      [
        "private_key_jwt",
        { token_endpoint_auth_method: "private_key_jwt" },
        "invalid_client_metadata",
      ],
      ["unknown scope", { scope: "app.access root" }, "invalid_client_metadata"],
      ["non-string name", { client_name: 42 }, "invalid_client_metadata"],
    ];
    for (const [name, body, error] of badMetadata) {
      await t.step(name, async () => {
        const { status, json } = await register(fx, {
          redirect_uris: ["https://a.example/cb"],
          ...body,
        });
        assert.equal(status, 400);
        assert.equal(json.error, error);
        assert.equal(typeof json.error_description, "string");
      });
    }
    // MCP 2026-07-28 asks clients for application_type (OpenID Connect Registration §2).
    const applicationTypes: {
      name: string;
      body: Record<string, unknown>;
      status: number;
      registered?: string;
      error?: RegExp;
    }[] = [
      { name: "no application_type is web", body: {}, status: 201, registered: "web" },
      {
        name: "native with a loopback redirect",
        body: { application_type: "native", redirect_uris: ["http://127.0.0.1:8976/callback"] },
        status: 201,
        registered: "native",
      },
      {
        name: "native with a private-use scheme",
        body: { application_type: "native", redirect_uris: ["com.example.app:/oauth2redirect"] },
        status: 201,
        registered: "native",
      },
      {
        name: "web with a loopback redirect (the web rule binds only the implicit grant)",
        body: { application_type: "web", redirect_uris: ["http://localhost:3000/cb"] },
        status: 201,
        registered: "web",
      },
      {
        name: "native with an https redirect",
        body: {
          application_type: "native",
          redirect_uris: ["http://127.0.0.1/cb", "https://app.example/cb"],
        },
        status: 400,
        error:
          /^invalid_redirect_uri: redirect URI "https:\/\/app.example\/cb" is not for a native application/,
      },
      {
        name: "an application_type OpenID Connect does not define",
        body: { application_type: "desktop" },
        status: 400,
        error: /^invalid_client_metadata: application_type must be web or native$/,
      },
    ];
    for (const c of applicationTypes) {
      await t.step(`application_type: ${c.name}`, async () => {
        const { status, json } = await register(fx, {
          redirect_uris: ["https://a.example/cb"],
          ...c.body,
        });
        assert.equal(status, c.status, JSON.stringify(json));
        if (c.registered) assert.equal(json.application_type, c.registered);
        if (c.error) assert.match(`${json.error}: ${json.error_description}`, c.error);
      });
    }
    await t.step("malformed, non-object, wrong type and oversized bodies", async () => {
      assert.equal((await register(fx, "{not json")).json.error, "invalid_client_metadata");
      assert.equal((await register(fx, "[1,2]")).json.error, "invalid_client_metadata");
      const wrongType = await register(fx, "redirect_uris=x", { "Content-Type": "text/plain" });
      assert.equal(wrongType.status, 415);
      const huge = await register(fx, {
        redirect_uris: ["https://a.example/cb"],
        padding: "x".repeat(20_000),
      });
      assert.equal(huge.status, 413);
    });
    await t.step("an unused registration expires; a used one stays", async () => {
      const unused = await registerClient(fx);
      const used = await registerClient(fx);
      const owner = await ownerBrowser(fx, "owner@example.com");
      const { params } = await authorizeParams(used);
      await consent(owner, fx, authorizeUrl(fx, params));
      fx.clock.advance(24 * 60 * 60 * 1000 + 1);
      const owner2 = await ownerBrowser(fx, "owner2@example.com");
      const gone = await owner2.get(authorizeUrl(fx, (await authorizeParams(unused)).params));
      assert.equal(gone.status, 400);
      assert.match(gone.text, /Unknown client_id/);
      const kept = await owner2.get(authorizeUrl(fx, (await authorizeParams(used)).params));
      assert.equal(kept.status, 200);
    });
  } finally {
    await fx.close();
  }
});

Deno.test("registration is rate limited per address", async () => {
  const fx = await oauthFixture({ VESTIBULE_RATE_LIMITS: "on" });
  try {
    for (let i = 0; i < 20; i++) {
      assert.equal((await register(fx, { redirect_uris: ["https://a.example/cb"] })).status, 201);
    }
    const limited = await register(fx, { redirect_uris: ["https://a.example/cb"] });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.response.headers.get("Retry-After")) >= 1);
    // 20 a minute: a minute later exactly 20 more.
    fx.clock.advance(60_000);
    for (let i = 0; i < 20; i++) {
      assert.equal((await register(fx, { redirect_uris: ["https://a.example/cb"] })).status, 201);
    }
    assert.equal((await register(fx, { redirect_uris: ["https://a.example/cb"] })).status, 429);
    // The rate, not only the burst: half a minute buys exactly 10.
    fx.clock.advance(30_000);
    for (let i = 0; i < 10; i++) {
      assert.equal(
        (await register(fx, { redirect_uris: ["https://a.example/cb"] })).status,
        201,
        `registration ${i} after 30 s`,
      );
    }
    assert.equal((await register(fx, { redirect_uris: ["https://a.example/cb"] })).status, 429);
  } finally {
    await fx.close();
  }
});

/** A loopback server publishing client metadata documents, counting fetches. */
function documentServer() {
  const port = freePorts(1)[0]!;
  const origin = `http://127.0.0.1:${port}`;
  const fetches = new Map<string, number>();
  const docs: Record<string, (url: string) => Response> = {
    "/good": (url) =>
      Response.json({
        client_id: url,
        client_name: "Doc Client",
        redirect_uris: ["https://doc.example/cb"],
        grant_types: ["authorization_code", "refresh_token"],
      }, { headers: { "Cache-Control": "max-age=600" } }),
    "/mismatch": () =>
      Response.json({
        client_id: `${origin}/other`,
        client_name: "X",
        redirect_uris: ["https://doc.example/cb"],
      }),
    "/noname": (url) =>
      Response.json({ client_id: url, redirect_uris: ["https://doc.example/cb"] }),
    "/redirect": () => new Response(null, { status: 302, headers: { Location: `${origin}/good` } }),
    "/big": (url) =>
      Response.json({
        client_id: url,
        client_name: "x".repeat(6000),
        redirect_uris: ["https://doc.example/cb"],
      }),
    "/secret": (url) =>
      Response.json({
        client_id: url,
        client_name: "X",
        redirect_uris: ["https://doc.example/cb"],
        token_endpoint_auth_method: "client_secret_basic",
      }),
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    return docs[path]?.(`${origin}${path}`) ?? new Response("no", { status: 404 });
  });
  return { origin, fetches, close: () => server.shutdown() };
}

Deno.test("client ID metadata documents", async (t) => {
  const docs = documentServer();
  const fx = await oauthFixture({ VESTIBULE_CIMD_ALLOW_LOOPBACK: "on" });
  const strict = await oauthFixture();
  try {
    const owner = await ownerBrowser(fx, "owner@example.com");
    const client = { clientId: `${docs.origin}/good`, redirectUri: "https://doc.example/cb" };

    await t.step("a document client is shown as such and completes the flow", async () => {
      const { params, verifier } = await authorizeParams(client);
      const page = await owner.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /<dd id="client-name">Doc Client<\/dd>/);
      assert.ok(page.text.includes(`client metadata document at <code>${client.clientId}</code>`));
      const location = await consent(owner, fx, authorizeUrl(fx, params));
      const { status, json } = await exchange(
        fx,
        client,
        location.searchParams.get("code")!,
        verifier,
      );
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(typeof json.refresh_token, "string");
      assert.equal(docs.fetches.get("/good"), 1, "the document was cached");
    });
    const refusals: [string, RegExp][] = [
      ["/mismatch", /client_id must equal its URL/],
      ["/noname", /must carry client_name/],
      ["/redirect", /redirects, which are not followed/],
      ["/big", /exceeds 5120 bytes/],
      ["/secret", /token_endpoint_auth_method &quot;none&quot;/],
      ["/missing", /answered 404/],
    ];
    for (const [path, message] of refusals) {
      await t.step(`refuses ${path}`, async () => {
        const { params } = await authorizeParams({
          clientId: `${docs.origin}${path}`,
          redirectUri: "https://doc.example/cb",
        });
        const page = await owner.get(authorizeUrl(fx, params));
        assert.equal(page.status, 400);
        assert.match(page.text, message);
      });
    }
    await t.step("the redirect was not followed", () => {
      assert.equal(docs.fetches.get("/good"), 1);
    });
    await t.step("without the switch, loopback documents are never fetched", async () => {
      const before = docs.fetches.get("/good");
      const { params } = await authorizeParams(client);
      const page = await new Browser().get(authorizeUrl(strict, params));
      assert.equal(page.status, 400);
      assert.match(page.text, /a loopback address\), which this server does not read/);
      assert.equal(docs.fetches.get("/good"), before);
    });
  } finally {
    await strict.close();
    await fx.close();
    await docs.close();
  }
});
