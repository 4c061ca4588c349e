// Per-person upstream sign-in end to end: an upstream protected by a real authorization server
// (oidc-provider) and an SDK MCP server that verifies its tokens; each person connects their own
// account from our page, and an agent's calls then reach the upstream as that person.
import assert from "node:assert/strict";
import {
  connect,
  connectPageUrl,
  personBrowser,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { until } from "../support/gateway_support.ts";
import type { Page } from "../support/accounts_browser.ts";
import type { RpcResult } from "../support/workspace_support.ts";
import {
  authorizeParams,
  authorizeUrl,
  consent,
  registerClient,
} from "../support/oauth_helpers.ts";

const text = (message: RpcResult) => message.result.content[0].text as string;

Deno.test("a person connects their own upstream account and their agent's calls reach the upstream as them", async () => {
  const setup = await startPersonUpstream();
  const { ws, upstream } = setup;
  try {
    const { token } = await ws.token(["app.access", "upstream.crm"]);
    // Nobody connected yet: the upstream's tools are unknown.
    assert.deepEqual((await ws.toolNames(token)).filter((n) => n.startsWith("crm__")), []);

    const owner = await personBrowser(setup);
    const done = await connect(setup, owner, "alice");
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Connected/);
    assert.equal(upstream.seen.registration, 1);
    assert.equal(upstream.seen.authorizationCode, 1);

    const names = await until("the upstream's tools", async () => {
      const listed = (await ws.toolNames(token)).filter((n) => n.startsWith("crm__"));
      return listed.length > 0 && listed;
    });
    assert.deepEqual(names.sort(), ["crm__echo", "crm__whoami"]);

    const called = await ws.call(token, "crm__whoami");
    assert.equal(called.status, 200);
    assert.equal(called.message.result.isError, undefined, JSON.stringify(called.message));
    assert.equal(text(called.message), "alice");

    // The member has not connected: a tool error with the link to connect, never a 401.
    const member = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    const refused = await ws.call(member.token, "crm__whoami");
    assert.equal(refused.status, 200);
    assert.equal(refused.message.result.isError, true);
    assert.ok(text(refused.message).includes(connectPageUrl(ws)), text(refused.message));

    // Following that link signed in goes straight to the upstream's sign-in.
    const memberBrowser = await personBrowser(setup, "member@example.com");
    const link = text(refused.message).match(/https?:\/\/\S+?(?=,|\s|$)/)![0];
    const followed = await memberBrowser.get(link);
    assert.equal(followed.status, 303);
    assert.ok(followed.response.headers.get("Location")!.startsWith(upstream.issuer));

    // /account links to it and says it is connected.
    const account = await owner.get(`${ws.server.authUrl}/account`);
    assert.match(account.text, /data-upstream="crm" data-status="connected"/);
    assert.ok(account.text.includes(`/connections/crm?business=${ws.businessId}`));
    // The owner sees who connected what (never a token); a member sees only their own.
    const everyone = account.text.slice(account.text.indexOf("Who connected which service"));
    assert.match(
      everyone,
      /<td data-label="Service">Acme CRM<\/td><td data-label="Person">owner@example\.com<\/td><td data-label="State">connected /,
    );
    assert.doesNotMatch(account.text, /eyJ/);
    const memberAccount = await memberBrowser.get(`${ws.server.authUrl}/account`);
    assert.match(memberAccount.text, /data-upstream="crm" data-status="none"/);
    assert.doesNotMatch(memberAccount.text, /Who connected which service/);

    // A callback reaching us without the session that started it is refused in place: never
    // a sign-in redirect carrying the upstream's code on to another page.
    const stray = await fetch(`${ws.server.authUrl}/connections/callback?code=c0de&state=s7`, {
      redirect: "manual",
    });
    assert.equal(stray.status, 400);
    assert.equal(stray.headers.get("Location"), null);
    assert.doesNotMatch(await stray.text(), /c0de/);

    // The store holds no token in clear: the tokens are a sealed box, nothing else looks like a
    // JWT, and the box's ciphertext is not JSON (random bytes may spell `eyJ` in base64url).
    for await (
      const entry of ws.server.store.list<{ tokens: Record<string, string> }>(
        ["ws", ws.businessId, "upstream_connection"],
      )
    ) {
      const { tokens, ...rest } = entry.value;
      assert.deepEqual(Object.keys(tokens).sort(), ["data", "iv", "k"]);
      assert.doesNotMatch(JSON.stringify(rest), /eyJ/);
      const sealed = Uint8Array.from(
        atob(tokens.data!.replaceAll("-", "+").replaceAll("_", "/")),
        (c) => c.charCodeAt(0),
      );
      assert.throws(() => JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(sealed)));
    }
  } finally {
    await setup.close();
  }
});

Deno.test("the connect page's forms may go on to the upstream's sign-in and, from an agent's consent, back to the agent", async () => {
  const setup = await startPersonUpstream();
  const { ws, upstream } = setup;
  const fx = { auth: ws.server.authUrl };
  // Browsers apply form-action to the redirect after a form: 'self' alone blocks both ways out.
  const formAction = (page: Page) =>
    /form-action ([^;]*)/.exec(page.response.headers.get("Content-Security-Policy") ?? "")?.[1];
  try {
    const owner = await personBrowser(setup);
    // Not connected, the link itself leads to the sign-in (a redirect, no form to allow).
    const plain = await owner.get(connectPageUrl(ws));
    assert.equal(plain.status, 303, plain.text);
    assert.ok(plain.response.headers.get("Location")!.startsWith(upstream.issuer));

    const agent = await registerClient(fx, { redirect_uris: ["http://127.0.0.1:8976/callback"] });
    const { params } = await authorizeParams(agent, { scope: "app.access upstream.crm" });
    const held = await consent(owner, fx, authorizeUrl(fx, params));
    assert.equal(held.pathname, "/connections/crm");
    assert.ok(held.searchParams.get("consent"), held.href);
    const fromConsent = await owner.get(held.href);
    assert.equal(fromConsent.status, 200, fromConsent.text);
    assert.equal(formAction(fromConsent), `'self' ${upstream.issuer} http://127.0.0.1:8976`);

    // A name with a malformed escape is no upstream: the page says so, never a server error.
    const malformed = await owner.get(`${fx.auth}/connections/%E0%A4%A?business=${ws.businessId}`);
    assert.equal(malformed.status, 404, malformed.text);
    assert.match(malformed.text, /There is no such service to connect in your businesses/);
  } finally {
    await setup.close();
  }
});
