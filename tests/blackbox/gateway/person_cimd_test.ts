// A second Vestibule as the upstream: an MCP server with its own OAuth authorization server,
// which accepts client metadata documents. The first Vestibule connects to it with its own
// document ({auth_url}/connections/client.json), the person signs in at the second one (mailed
// link, consent form), and the agent's calls of its workspace tools go through the first. Both
// are on loopback, so both allow loopback documents (without that the first registers instead:
// vestibule_behind_vestibule_test.ts).
import assert from "node:assert/strict";
import { tempOutbox } from "../support/accounts_browser.ts";
import { startGatewayServer, until } from "../support/gateway_support.ts";
import { consent, type OAuthFixture } from "../support/oauth_helpers.ts";
import { connectPageUrl, writeKeyFile } from "../support/person_upstream_support.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test("a Vestibule connects a person to another Vestibule with its client metadata document, and the agent calls its workspace tools as them", async () => {
  const upstreamOutbox = await tempOutbox();
  const upstream = await startWorkspaceServer({
    VESTIBULE_CIMD_ALLOW_LOOPBACK: "on",
    VESTIBULE_MAIL: upstreamOutbox.env,
  });
  const keyFile = await writeKeyFile();
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{
      name: "other",
      title: "Other Vestibule",
      url: `${upstream.server.apiUrl}/api/mcp`,
      auth: "person",
    }],
    {
      VESTIBULE_UPSTREAM_KEY_FILE: keyFile,
      VESTIBULE_MAIL: outbox.env,
      VESTIBULE_CIMD_ALLOW_LOOPBACK: "on",
    },
  );
  try {
    const { token } = await ws.token(["app.access", "upstream.other"]);
    const here = await signIn(ws, outbox, "owner@example.com");
    const page = connectPageUrl(ws, "other");
    const started = await here.get(page);
    assert.equal(started.status, 303, started.text);
    const authorize = new URL(started.response.headers.get("Location")!);
    assert.equal(authorize.origin, upstream.server.authUrl);
    assert.equal(
      authorize.searchParams.get("client_id"),
      `${ws.server.authUrl}/connections/client.json`,
    );
    assert.equal(authorize.searchParams.get("resource"), upstream.server.apiUrl);

    // The person at the second Vestibule: signed in by its mailed link, then its consent.
    const there = await signIn(upstream, upstreamOutbox, "owner@example.com");
    const back = await consent(
      there,
      { auth: upstream.server.authUrl } as OAuthFixture,
      authorize.href,
    );
    assert.equal(back.origin + back.pathname, `${ws.server.authUrl}/connections/callback`);
    const done = await here.get(back.href);
    assert.equal(done.status, 200, done.text);
    assert.match(done.text, /Connected/);

    const names = await until("the other Vestibule's tools", async () => {
      const listed = (await ws.toolNames(token)).filter((n) => n.startsWith("other__"));
      return listed.length > 0 && listed;
    });
    assert.ok(names.includes("other__get_business"), names.join());
    const called = await ws.call(token, "other__get_business");
    assert.equal(called.status, 200);
    assert.equal(called.message.result.isError, undefined, JSON.stringify(called.message));
    // The second Vestibule's business, which the person chose at its consent.
    assert.ok(JSON.stringify(called.message.result).includes(upstream.businessId));
  } finally {
    await ws.close();
    await upstream.close();
    await Deno.remove(keyFile);
  }
});
