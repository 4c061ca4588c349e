// A member whose agent asks for an owner-only scope: told so plainly on the consent page, and
// the workspace then answers a plain refusal, never a step-up challenge the member's consent
// could not satisfy (the loop an agent would otherwise go round).
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { Browser, followLink, submitForm } from "../support/accounts_browser.ts";
import { mcpPost } from "../support/mcp_helpers.ts";
import {
  authorizeParams,
  authorizeUrl,
  consent,
  enabledScopes,
  exchange,
  oauthFixture,
  ownerBrowser,
  registerClient,
} from "../support/oauth_helpers.ts";

Deno.test("a member asked for an owner-only scope is told so, with no step-up loop", async (t) => {
  const fx = await oauthFixture();
  try {
    await ownerBrowser(fx, "owner@example.com", "Acme Bakery");
    const accounts = createAccounts(fx.server.store, fx.clock.now);
    const owner = await accounts.findAccountByEmail("owner@example.com");
    const [acme] = await accounts.listBusinessesOf(owner!.id);
    await accounts.addMember(acme!.business.id, "clerk@example.com", "member");
    const clerk = new Browser();
    await submitForm(clerk, `${fx.auth}/sign-in`, `${fx.auth}/sign-in`, {
      email: "clerk@example.com",
    });
    await followLink(clerk, (await fx.outbox.read()).at(-1)!.link);
    const client = await registerClient(fx, { client_name: "Till Agent" });
    const { params, verifier } = await authorizeParams(client, {
      scope: "app.access members.read billing.manage",
    });

    await t.step("the consent page says plainly that only an owner can allow it", async () => {
      const page = await clerk.get(authorizeUrl(fx, params));
      assert.equal(page.status, 200);
      assert.match(
        page.text,
        /<p id="owner-only-notice" role="note"><strong>Only an owner of Acme Bakery can allow\s+<code>billing.manage<\/code>.<\/strong>\s+You are a member, so this application cannot get it\s+from you, whatever it asks/,
      );
      assert.match(page.text, /name="scope" value="billing.manage"\s+disabled>/);
      assert.deepEqual(enabledScopes(page.text), ["app.access", "members.read"]);
    });

    await t.step(
      "the member's tool call is refused without a challenge to consent again",
      async () => {
        const location = await consent(clerk, fx, authorizeUrl(fx, params));
        const { json } = await exchange(fx, client, location.searchParams.get("code")!, verifier);
        assert.equal(json.scope, "app.access members.read");
        const response = await mcpPost(
          `${fx.server.apiUrl}/api/mcp`,
          {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "request_billing_change", arguments: { plan: "growth" } },
          },
          {
            "MCP-Protocol-Version": "2025-11-25",
            Authorization: `Bearer ${json.access_token}`,
          },
        );
        assert.equal(response.status, 403);
        // RFC 6750 §3.1: no insufficient_scope challenge, since no consent of this account helps.
        assert.equal(response.headers.get("WWW-Authenticate"), null);
        const body = await response.json();
        assert.equal(body.error, "access_denied");
        assert.equal(
          body.error_description,
          "The tool request_billing_change needs billing.manage, which only an owner of the business can grant; this account is a member",
        );
      },
    );
  } finally {
    await fx.close();
  }
});
