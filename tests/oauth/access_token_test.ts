import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { createAccessTokenVerifier } from "../../src/oauth/access_token.ts";
import { revokeGrant } from "../../src/oauth/grants.ts";
import { config } from "./fixtures.ts";
import { issueGrant } from "../../testkit/issue_grant.ts";
import { createSigningKeys } from "../../src/oauth/signing_keys.ts";
import { openKvStore } from "../../src/store/kv_store.ts";

async function setup() {
  let clock = Date.UTC(2026, 0, 1);
  const now = () => clock;
  const store = await openKvStore(":memory:", now);
  const verify = createAccessTokenVerifier({
    keys: createSigningKeys({ store, now }),
    store,
    now,
    issuer: "https://auth.example.com/api/auth",
    audience: config.apiUrl,
  });
  const issued = await issueGrant({ config, store, now }, {
    accountId: "acc1",
    businessId: "biz1",
    clientId: "client1",
    scopes: ["app.access", "members.read"],
  });
  return { store, now, verify, issued, advance: (ms: number) => (clock += ms) };
}

function decode(
  jwt: string,
): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p] = jwt.split(".");
  const parse = (s: string) =>
    JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(atob(s.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0)),
      ),
    );
  return { header: parse(h!), payload: parse(p!) };
}

Deno.test("access-token verifier", async (t) => {
  const { store, now, verify, issued, advance } = await setup();
  try {
    await t.step("accepts a token issued for a live grant, with every claim", async () => {
      const check = await verify(issued.tokens.access_token);
      assert.equal(check.ok, true);
      if (!check.ok) return;
      assert.equal(check.claims.iss, "https://auth.example.com/api/auth");
      assert.equal(check.claims.aud, "https://api.example.com");
      assert.equal(check.claims.sub, "acc1");
      assert.equal(check.claims.business, "biz1");
      assert.equal(check.claims.client_id, "client1");
      assert.equal(check.claims.scope, "app.access members.read");
      assert.equal(check.claims.gid, issued.grantId);
      assert.equal(check.claims.exp - check.claims.iat, 3600);
      const { header } = decode(issued.tokens.access_token);
      assert.equal(header.alg, "ES256");
      assert.equal(header.typ, "at+jwt");
      const jwks = await createSigningKeys({ store, now }).jwks();
      assert.equal(jwks.keys.length, 1);
      assert.equal(jwks.keys[0]!.kid, header.kid);
      assert.equal("d" in jwks.keys[0]!, false, "the JWKS never publishes the private part");
    });

    await t.step("refuses a tampered payload", async () => {
      const [h, p, s] = issued.tokens.access_token.split(".");
      const payload = decode(issued.tokens.access_token).payload;
      const forged = btoa(JSON.stringify({ ...payload, scope: "billing.manage" }))
        .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      assert.notEqual(forged, p);
      const check = await verify(`${h}.${forged}.${s}`);
      assert.deepEqual(check, {
        ok: false,
        description: "The access token's signature does not verify",
      });
    });

    await t.step("refuses a token signed by a foreign key with our kid", async () => {
      const { header, payload } = decode(issued.tokens.access_token);
      const { privateKey } = await generateKeyPair("ES256");
      const jwt = await new SignJWT(payload).setProtectedHeader({
        alg: "ES256",
        kid: String(header.kid),
        typ: "at+jwt",
      }).sign(privateKey);
      const check = await verify(jwt);
      assert.deepEqual(check, {
        ok: false,
        description: "The access token's signature does not verify",
      });
    });

    await t.step("refuses a token signed by an unknown kid", async () => {
      const { payload } = decode(issued.tokens.access_token);
      const { privateKey, publicKey } = await generateKeyPair("ES256");
      void await exportJWK(publicKey);
      const jwt = await new SignJWT(payload).setProtectedHeader({
        alg: "ES256",
        kid: "attacker",
        typ: "at+jwt",
      }).sign(privateKey);
      const check = await verify(jwt);
      assert.deepEqual(check, {
        ok: false,
        description: "The access token was not signed by a key of this server",
      });
    });

    await t.step("refuses alg:none", async () => {
      const { payload } = decode(issued.tokens.access_token);
      const jwt = new UnsecuredJWT(payload).encode();
      const check = await verify(jwt);
      assert.equal(check.ok, false);
    });

    await t.step("refuses garbage", async () => {
      assert.deepEqual(await verify("not-a-jwt"), {
        ok: false,
        description: "The access token is not a well-formed signed JWT",
      });
    });

    await t.step("refuses a wrong audience, an array audience and a wrong issuer", async () => {
      const keys = createSigningKeys({ store, now });
      const key = await keys.current();
      const { payload } = decode(issued.tokens.access_token);
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT({ ...payload, ...claims }).setProtectedHeader({
          alg: "ES256",
          kid: key.kid,
          typ: "at+jwt",
        }).sign(key.privateKey);
      const wrongAud = await verify(await sign({ aud: "https://other.example.com" }));
      assert.equal(wrongAud.ok, false);
      assert.match(wrongAud.ok ? "" : wrongAud.description, /"aud" claim/);
      const arrayAud = await verify(await sign({ aud: ["https://api.example.com", "x"] }));
      assert.equal(arrayAud.ok, false);
      // The same resource as the token endpoint would accept, but `aud` is exactly the string.
      for (
        const aud of [
          ["https://api.example.com"],
          "https://api.example.com/",
          "HTTPS://API.EXAMPLE.COM",
        ]
      ) {
        assert.equal((await verify(await sign({ aud }))).ok, false, JSON.stringify(aud));
      }
      const wrongIss = await verify(await sign({ iss: "https://evil.example.com/api/auth" }));
      assert.equal(wrongIss.ok, false);
      assert.match(wrongIss.ok ? "" : wrongIss.description, /"iss" claim/);
      const untyped = await new SignJWT(payload).setProtectedHeader({ alg: "ES256", kid: key.kid })
        .sign(key.privateKey);
      assert.equal(
        (await verify(untyped)).ok,
        false,
        "an id_token-shaped JWT is not an access token",
      );
    });

    await t.step("a token stays valid across a key rotation, then its key retires", async () => {
      const keys = createSigningKeys({ store, now });
      const rotated = await keys.rotate();
      assert.notEqual(rotated.retired, null);
      assert.equal((await verify(issued.tokens.access_token)).ok, true);
      assert.equal((await keys.jwks()).keys.length, 2);
    });

    await t.step("refuses an expired token", async () => {
      advance(3601 * 1000);
      assert.deepEqual(await verify(issued.tokens.access_token), {
        ok: false,
        description: "The access token has expired",
      });
    });
  } finally {
    store.close();
  }
});

Deno.test("access-token verifier refuses a token whose grant was revoked", async () => {
  const { store, verify, issued } = await setup();
  try {
    assert.equal((await verify(issued.tokens.access_token)).ok, true);
    assert.equal(await revokeGrant(store, issued.grantId), true);
    assert.deepEqual(await verify(issued.tokens.access_token), {
      ok: false,
      description: "The grant behind this access token was revoked or has ended",
    });
  } finally {
    store.close();
  }
});
