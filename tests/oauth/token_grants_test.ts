// The two grants of the token endpoint in process: parameters in, a token response or an
// OAuthError out, on an in-memory store and a manual clock.
import assert from "node:assert/strict";
import type { ClientRecord } from "../../src/oauth/clients.ts";
import { getGrant } from "../../src/oauth/grants.ts";
import { OAuthError } from "../../src/oauth/oauth_error.ts";
import { exchangeCode, refreshGrant } from "../../src/oauth/token_grants.ts";
import { config, oauthCore, REDIRECT, VERIFIER } from "./fixtures.ts";

type Fields = Record<string, string>;

/** The OAuthError a call must throw: its code and its exact description. */
async function refused(call: Promise<unknown>, code: string, description: string) {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof OAuthError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.description, description);
    return true;
  });
}

/** An `admit` that counts its calls, as the client endpoint's does. */
function admitCounter() {
  const counter = {
    calls: 0,
    admit: () => {
      counter.calls++;
      return Promise.resolve();
    },
  };
  return counter;
}

const exchangeFields = (code: string, extra: Fields = {}): Fields => ({
  grant_type: "authorization_code",
  code,
  redirect_uri: REDIRECT,
  code_verifier: VERIFIER,
  ...extra,
});

Deno.test("exchangeCode: each refusal, whether it burns the code, and when it admits", async (t) => {
  const core = await oauthCore();
  try {
    const client = await core.register(["authorization_code", "refresh_token"]);
    const other = await core.register();
    const cases: {
      name: string;
      by?: ClientRecord;
      fields: (code: string) => Fields;
      error: [code: string, description: string];
      admitted: number;
    }[] = [
      {
        name: "a code of another client",
        by: other,
        fields: (code) => exchangeFields(code),
        error: ["invalid_grant", "The authorization code was issued to another client"],
        admitted: 0,
      },
      {
        name: "another redirect_uri",
        fields: (code) => exchangeFields(code, { redirect_uri: "https://client.example/other" }),
        error: ["invalid_grant", "redirect_uri must equal the one of the authorization request"],
        admitted: 0,
      },
      {
        name: "no code_verifier",
        fields: (code) => {
          const { code_verifier: _, ...rest } = exchangeFields(code);
          return rest;
        },
        error: ["invalid_grant", "code_verifier is required: 43-128 characters of [A-Za-z0-9._~-]"],
        admitted: 0,
      },
      {
        name: "a code_verifier that does not match",
        fields: (code) => exchangeFields(code, { code_verifier: "w".repeat(43) }),
        error: ["invalid_grant", "code_verifier does not match the code_challenge"],
        admitted: 0,
      },
      {
        // S256 only: the challenge itself is no verifier, as it would be under "plain".
        name: "the code_challenge itself as the code_verifier",
        fields: (code) => exchangeFields(code, { code_verifier: core.challenge }),
        error: ["invalid_grant", "code_verifier does not match the code_challenge"],
        admitted: 0,
      },
      {
        name: "another resource, after the verifier proved the client",
        fields: (code) => exchangeFields(code, { resource: "https://other.example" }),
        error: ["invalid_target", `"resource" must equal "https://api.example.com"`],
        admitted: 1,
      },
    ];
    for (const c of cases) {
      await t.step(`${c.name}: ${c.error[0]}, and the code is burned`, async () => {
        const code = await core.code(client);
        const counter = admitCounter();
        await refused(
          exchangeCode(core.deps, c.by ?? client, c.fields(code), counter.admit),
          ...c.error,
        );
        assert.equal(counter.calls, c.admitted);
        await refused(
          exchangeCode(core.deps, client, exchangeFields(code), () => Promise.resolve()),
          "invalid_grant",
          "The authorization code is unknown or has expired",
        );
      });
    }

    await t.step("no code, or an unknown one, burns nothing and admits nobody", async () => {
      const counter = admitCounter();
      await refused(
        exchangeCode(core.deps, client, { grant_type: "authorization_code" }, counter.admit),
        "invalid_request",
        "code is required",
      );
      await refused(
        exchangeCode(core.deps, client, exchangeFields("nope"), counter.admit),
        "invalid_grant",
        "The authorization code is unknown or has expired",
      );
      assert.equal(counter.calls, 0);
    });

    await t.step("a good exchange: the token response, once; a replay revokes it", async () => {
      const code = await core.code(client, { resource: config.apiUrl });
      const counter = admitCounter();
      const tokens = await exchangeCode(
        core.deps,
        client,
        exchangeFields(code, { resource: `${config.apiUrl}/` }),
        counter.admit,
      );
      assert.equal(counter.calls, 1);
      assert.equal(tokens.token_type, "Bearer");
      assert.equal(tokens.expires_in, 3600);
      assert.equal(tokens.scope, "app.access");
      assert.equal(typeof tokens.refresh_token, "string", "the client may refresh");
      assert.equal(tokens.id_token, undefined, "no openid, no id_token");
      const gid = JSON.parse(atob(tokens.access_token.split(".")[1]!)).gid;
      assert.ok(await getGrant(core.store, gid));
      await refused(
        exchangeCode(core.deps, client, exchangeFields(code), () => Promise.resolve()),
        "invalid_grant",
        "The authorization code was already used; the grant it created is revoked",
      );
      assert.equal(await getGrant(core.store, gid), null);
    });

    await t.step(
      "openid with email: an id_token; no refresh token for a code-only client",
      async () => {
        const code = await core.code(other, { scopes: ["openid", "email", "app.access"] });
        const tokens = await exchangeCode(
          core.deps,
          other,
          exchangeFields(code),
          () => Promise.resolve(),
        );
        assert.equal(tokens.scope, "openid email app.access");
        assert.equal(tokens.refresh_token, undefined);
        const claims = JSON.parse(atob(tokens.id_token!.split(".")[1]!));
        assert.equal(claims.email, "owner@example.com");
        assert.equal(claims.aud, other.clientId);
      },
    );

    await t.step(
      "consent no longer holds: the member's owner-only scope, a member gone",
      async () => {
        const memberCode = await core.code(client, {
          accountId: core.memberId,
          scopes: ["workflows.run"],
        });
        await refused(
          exchangeCode(core.deps, client, exchangeFields(memberCode), () => Promise.resolve()),
          "invalid_grant",
          "None of the consented scopes can still be granted",
        );
        const goneCode = await core.code(client, { accountId: core.memberId });
        await core.accounts.removeMember(core.business.id, core.memberId);
        await refused(
          exchangeCode(core.deps, client, exchangeFields(goneCode), () => Promise.resolve()),
          "invalid_grant",
          "The account is no longer a member of the business",
        );
      },
    );
  } finally {
    core.close();
  }
});

Deno.test("refreshGrant: rotation, the retry window, reuse and narrowing", async (t) => {
  const core = await oauthCore();
  try {
    const client = await core.register(["authorization_code", "refresh_token"]);
    const other = await core.register(["authorization_code", "refresh_token"]);
    const issue = async (scopes = ["app.access", "members.read", "offline_access"]) => {
      const code = await core.code(client, { scopes });
      return await exchangeCode(core.deps, client, exchangeFields(code), () => Promise.resolve());
    };
    const refresh = (
      token: string,
      extra: Fields = {},
      by = client,
      admit = () => Promise.resolve(),
    ) =>
      refreshGrant(
        core.deps,
        by,
        { grant_type: "refresh_token", refresh_token: token, ...extra },
        admit,
      );

    await t.step("refusals before the token is proved admit nobody", async () => {
      const { refresh_token } = await issue();
      const counter = admitCounter();
      await refused(
        refreshGrant(core.deps, client, { grant_type: "refresh_token" }, counter.admit),
        "invalid_request",
        "refresh_token is required",
      );
      await refused(
        refresh("nope", {}, client, counter.admit),
        "invalid_grant",
        "The refresh token is unknown or has expired",
      );
      await refused(
        refresh(refresh_token!, {}, other, counter.admit),
        "invalid_grant",
        "The refresh token was issued to another client",
      );
      assert.equal(counter.calls, 0);
    });

    await t.step("a refresh may narrow, never widen, and a refusal leaves the token", async () => {
      const { refresh_token } = await issue();
      await refused(
        refresh(refresh_token!, { scope: "billing.read" }),
        "invalid_scope",
        'scope "billing.read" was not granted',
      );
      await refused(
        refresh(refresh_token!, { resource: "https://other.example" }),
        "invalid_target",
        `"resource" must equal "https://api.example.com"`,
      );
      const counter = admitCounter();
      const narrowed = await refresh(
        refresh_token!,
        { scope: "app.access" },
        client,
        counter.admit,
      );
      assert.equal(counter.calls, 1);
      assert.equal(narrowed.scope, "app.access");
      assert.notEqual(narrowed.refresh_token, refresh_token);
      const wide = await refresh(narrowed.refresh_token!);
      assert.equal(wide.scope, "offline_access app.access members.read", "the grant kept all");
    });

    await t.step(
      "a retry within 30 s gets the identical answer; later, reuse revokes",
      async () => {
        const { refresh_token, access_token } = await issue();
        const first = await refresh(refresh_token!);
        core.clock.advance(30_000);
        assert.deepEqual(await refresh(refresh_token!), first);
        core.clock.advance(1);
        await refused(
          refresh(refresh_token!),
          "invalid_grant",
          "The refresh token was already used; the grant is revoked",
        );
        const gid = JSON.parse(atob(access_token.split(".")[1]!)).gid;
        assert.equal(await getGrant(core.store, gid), null);
        await refused(
          refresh(first.refresh_token!),
          "invalid_grant",
          "The grant was revoked or has ended",
        );
      },
    );

    await t.step("a member who left: refused, and the grant is revoked", async () => {
      const code = await core.code(client, { accountId: core.memberId });
      const tokens = await exchangeCode(
        core.deps,
        client,
        exchangeFields(code),
        () => Promise.resolve(),
      );
      await core.accounts.removeMember(core.business.id, core.memberId);
      await refused(
        refresh(tokens.refresh_token!),
        "invalid_grant",
        "The account is no longer a member of the business",
      );
      const gid = JSON.parse(atob(tokens.access_token.split(".")[1]!)).gid;
      assert.equal(await getGrant(core.store, gid), null);
    });
  } finally {
    core.close();
  }
});
