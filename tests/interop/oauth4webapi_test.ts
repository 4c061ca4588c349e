// Interop: oauth4webapi (written by someone else, strict about every response) performs
// discovery, registration, the authorization request, token, refresh and revocation, and
// validates the JWT access token against our JWKS. The human steps go through the forms
// and the e-mail outbox.
import assert from "node:assert/strict";
import * as oauth from "npm:oauth4webapi@^3.8.8";
import {
  authorizeUrl,
  consent,
  oauthFixture,
  ownerBrowser,
} from "../blackbox/support/oauth_helpers.ts";

Deno.test("oauth4webapi: discovery, registration, code, refresh, revocation", async (t) => {
  const fx = await oauthFixture();
  const insecure = { [oauth.allowInsecureRequests]: true }; // loopback http in tests
  const issuer = new URL(fx.issuer);
  const redirectUri = "http://127.0.0.1:9/callback";
  try {
    const browser = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");
    let as!: oauth.AuthorizationServer;
    let client!: oauth.Client;
    let tokens!: oauth.TokenEndpointResponse;
    const auth = oauth.None();

    await t.step("RFC 8414 discovery, and the OpenID variant", async () => {
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }),
      );
      assert.equal(as.issuer, fx.issuer);
      const oidc = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }),
      );
      assert.deepEqual(oidc, as);
    });

    await t.step("dynamic client registration", async () => {
      client = await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(as, {
          client_name: "oauth4webapi",
          redirect_uris: [redirectUri],
          grant_types: ["authorization_code", "refresh_token"],
          token_endpoint_auth_method: "none",
        }, insecure),
      );
      assert.equal(typeof client.client_id, "string");
    });

    await t.step("authorization request, consent, and the code exchange", async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const url = authorizeUrl(fx, {
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: redirectUri,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256",
        scope: "openid email offline_access app.access",
        resource: fx.server.apiUrl,
        state,
        nonce,
      });
      assert.equal(new URL(url).origin + new URL(url).pathname, as.authorization_endpoint);
      const callback = await consent(browser, fx, url);
      const params = oauth.validateAuthResponse(as, client, callback, state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirectUri,
        verifier,
        { additionalParameters: { resource: fx.server.apiUrl }, ...insecure },
      );
      tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
        expectedNonce: nonce,
        requireIdToken: true,
      });
      assert.equal(tokens.token_type, "bearer");
      assert.equal(tokens.scope, "openid email offline_access app.access");
      const claims = oauth.getValidatedIdTokenClaims(tokens)!;
      assert.equal(claims.email, "owner@example.com");
    });

    await t.step("the access token is a valid RFC 9068 JWT for the resource", async () => {
      const request = new Request(`${fx.server.apiUrl}/api/mcp`, {
        headers: { Authorization: `Bearer ${tokens.access_token}` },
      });
      const claims = await oauth.validateJwtAccessToken(as, request, fx.server.apiUrl, insecure);
      assert.equal(claims.client_id, client.client_id);
      assert.equal(claims.iss, fx.issuer);
    });

    await t.step("refresh", async () => {
      const response = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        tokens.refresh_token!,
        { additionalParameters: { resource: fx.server.apiUrl }, ...insecure },
      );
      const refreshed = await oauth.processRefreshTokenResponse(as, client, response);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      tokens = refreshed;
    });

    await t.step("revocation, after which refresh fails", async () => {
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, tokens.refresh_token!, insecure),
      );
      const response = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        tokens.refresh_token!,
        insecure,
      );
      await assert.rejects(
        () => oauth.processRefreshTokenResponse(as, client, response),
        (error: unknown) =>
          error instanceof oauth.ResponseBodyError && error.error === "invalid_grant",
      );
    });
  } finally {
    await fx.close();
  }
});
