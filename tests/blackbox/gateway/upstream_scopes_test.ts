// A server with two upstreams (one owner-only, one mapping a tool to its own scope word) names
// their scopes wherever it names the spec's: both metadata documents, the OpenAPI scheme, the
// onboarding list, the consent page; asks for them are accepted, unknown ones refused.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { Browser, followLink, hiddenField, submitForm } from "../support/accounts_browser.ts";
import { writeUpstreamsFile } from "../support/gateway_support.ts";
import { rpc } from "../support/mcp_helpers.ts";
import {
  authorizeParams,
  authorizeUrl,
  enabledScopes,
  oauthFixture,
  ownerBrowser,
  postForm,
  registerClient,
} from "../support/oauth_helpers.ts";

const UPSTREAM_SCOPES = ["upstream.vault", "upstream.x", "upstream.x.write"];

const UPSTREAMS = [
  { name: "vault", title: "Vault", url: "http://127.0.0.1:1/mcp", ownerOnly: true },
  {
    name: "x",
    title: "X Files",
    command: "x-server",
    scopes: { "put-file": "upstream.x.write", "del-file": "upstream.x.write" },
  },
];

Deno.test("the upstreams' scopes follow the spec's everywhere the spec's are named", async (t) => {
  const file = await writeUpstreamsFile(UPSTREAMS);
  const fx = await oauthFixture({ VESTIBULE_UPSTREAMS: file });
  const { server } = fx;
  try {
    await t.step("authorization-server and protected-resource metadata", async () => {
      const as = await (await fetch(`${fx.auth}/.well-known/oauth-authorization-server/api/auth`))
        .json();
      assert.deepEqual(as.scopes_supported, [...SUPPORTED_SCOPES, ...UPSTREAM_SCOPES]);
      const pr = await (await fetch(`${server.apiUrl}/.well-known/oauth-protected-resource`))
        .json();
      assert.deepEqual(pr.scopes_supported, [
        ...SUPPORTED_SCOPES.filter((s) => s !== "offline_access"),
        ...UPSTREAM_SCOPES,
      ]);
    });

    await t.step("the OpenAPI oauth2 scheme, with each meaning", async () => {
      const doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
      const scopes = doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes;
      assert.deepEqual(Object.keys(scopes), [...SUPPORTED_SCOPES, ...UPSTREAM_SCOPES]);
      assert.equal(scopes["upstream.vault"], "use the tools of Vault");
      assert.equal(scopes["upstream.x"], "use the tools of X Files");
      assert.equal(scopes["upstream.x.write"], "use put-file, del-file of X Files");
    });

    await t.step("the onboarding list_scopes tool", async () => {
      const answer = await rpc(`${fx.auth}/mcp`, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_scopes", arguments: {} },
      }, { "MCP-Protocol-Version": "2025-11-25" });
      const scopes = answer.result.structuredContent.scopes;
      assert.deepEqual(scopes.slice(-3), [
        {
          name: "upstream.vault",
          meaning: "use the tools of Vault",
          preparesHumanDecision: false,
          ownerOnly: true,
        },
        {
          name: "upstream.x",
          meaning: "use the tools of X Files",
          preparesHumanDecision: false,
          ownerOnly: false,
        },
        {
          name: "upstream.x.write",
          meaning: "use put-file, del-file of X Files",
          preparesHumanDecision: false,
          ownerOnly: false,
        },
      ]);
    });

    const client = await registerClient(fx, { client_name: "Gateway Agent" });
    const owner = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");

    await t.step(
      "an authorization request for an upstream scope shows it on the consent page",
      async () => {
        const { params } = await authorizeParams(client, {
          scope: "app.access upstream.x upstream.vault",
        });
        const page = await owner.get(authorizeUrl(fx, params));
        assert.equal(page.status, 200, page.text);
        assert.ok(page.text.includes("<code>upstream.x</code>: use the tools of X Files"));
        assert.match(
          page.text,
          /<code>upstream.vault<\/code>: use the tools of Vault<em class="mark" data-mark="owner-only">owner only<\/em>/,
        );
        assert.deepEqual(enabledScopes(page.text), ["app.access", "upstream.vault", "upstream.x"]);
      },
    );

    await t.step("an unknown upstream scope is refused invalid_scope", async () => {
      const { params } = await authorizeParams(client, { scope: "app.access upstream.nope" });
      const response = await owner.get(authorizeUrl(fx, params));
      const location = new URL(response.response.headers.get("Location")!);
      assert.equal(location.searchParams.get("error"), "invalid_scope");
      assert.equal(
        location.searchParams.get("error_description"),
        'scope "upstream.nope" is not supported',
      );
    });

    await t.step("a member sees the owner-only upstream blocked and cannot grant it", async () => {
      const accounts = createAccounts(server.store, fx.clock.now);
      const boss = await accounts.findAccountByEmail("owner@example.com");
      const [acme] = await accounts.listBusinessesOf(boss!.id);
      await accounts.addMember(acme!.business.id, "clerk@example.com", "member");
      const clerk = new Browser();
      await submitForm(clerk, `${fx.auth}/sign-in`, `${fx.auth}/sign-in`, {
        email: "clerk@example.com",
      });
      await followLink(clerk, (await fx.outbox.read()).at(-1)!.link);
      const { params } = await authorizeParams(client, {
        scope: "app.access upstream.x upstream.vault",
      });
      const page = await clerk.get(authorizeUrl(fx, params));
      assert.match(
        page.text,
        /Only an owner of Acme Bakery can allow\s+<code>upstream.vault<\/code>/,
      );
      assert.match(page.text, /name="scope" value="upstream.vault"\s+disabled>/);
      assert.deepEqual(enabledScopes(page.text), ["app.access", "upstream.x"]);
      const body = new URLSearchParams({
        txn: hiddenField(page.text, "txn"),
        csrf: hiddenField(page.text, "csrf"),
        decision: "allow",
      });
      body.append("scope", "app.access");
      body.append("scope", "upstream.vault");
      const answer = await postForm(clerk, `${fx.auth}/api/auth/oauth2/consent`, body);
      assert.equal(answer.status, 403);
      assert.match(answer.text, /Only an owner can grant &quot;upstream.vault&quot;/);
    });
  } finally {
    await fx.close();
    await Deno.remove(file);
  }
});
