// VESTIBULE_WORKSPACE_TOOLS=gateway: agents see the upstreams' tools and only the own tools every
// agent needs; the consent page says what app.access then opens. The default serves them all.
import assert from "node:assert/strict";
import { SCOPE_MEANINGS } from "../../../src/oauth/scopes.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import {
  authorizeParams,
  authorizeUrl,
  oauthFixture,
  ownerBrowser,
  registerClient,
} from "../support/oauth_helpers.ts";
import { startGatewayServer, writeUpstreamsFile } from "../support/gateway_support.ts";

const GATEWAY_OWN_TOOLS = [
  "get_agent_connection_setup",
  "verify_agent_connection",
  "get_business",
  "get_approval",
  "redeliver_decision",
];

Deno.test("with VESTIBULE_WORKSPACE_TOOLS=gateway, tools/list holds the upstreams and the tools every agent needs", async () => {
  const upstream = startTinyUpstream();
  const gateway = await startGatewayServer(
    [{ name: "tiny", title: "Tiny", url: upstream.url }],
    { VESTIBULE_WORKSPACE_TOOLS: "gateway" },
  );
  const all = await startGatewayServer([{ name: "tiny", title: "Tiny", url: upstream.url }]);
  try {
    const { token } = await gateway.token(["app.access", "upstream.tiny"]);
    assert.deepEqual(await gateway.toolNames(token), [...GATEWAY_OWN_TOOLS, "tiny__add"]);
    const business = await gateway.call(token, "get_business", {});
    assert.equal(business.message.result.isError, undefined);
    const gone = await gateway.call(token, "list_workflows", {});
    assert.match(gone.message.error.message, /^Unknown tool: "list_workflows"/);

    const { token: allToken } = await all.token(["app.access", "upstream.tiny"]);
    const names = await all.toolNames(allToken);
    assert.ok(names.includes("list_workflows") && names.includes("start_workflow"));
    assert.ok(names.length > GATEWAY_OWN_TOOLS.length + 20, `${names.length} tools by default`);
  } finally {
    await gateway.close();
    await all.close();
    await upstream.close();
  }
});

Deno.test("with VESTIBULE_WORKSPACE_TOOLS=gateway, the consent page says what app.access opens", async () => {
  const upstream = startTinyUpstream();
  const file = await writeUpstreamsFile([{ name: "tiny", title: "Tiny", url: upstream.url }]);
  const fx = await oauthFixture({
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_WORKSPACE_TOOLS: "gateway",
  });
  try {
    const client = await registerClient(fx);
    const owner = await ownerBrowser(fx, "owner@example.com", "Acme Bakery");
    const { params } = await authorizeParams(client, { scope: "app.access upstream.tiny" });
    const page = await owner.get(authorizeUrl(fx, params));
    assert.equal(page.status, 200);
    assert.ok(
      page.text.includes(
        "<code>app.access</code>: read the business&#39;s name and the approvals asked for " +
          "through its agents; create, restart and verify the agent connection test",
      ),
      page.text,
    );
    assert.ok(!page.text.includes(SCOPE_MEANINGS["app.access"]), "not the workflows it hides");
    assert.ok(page.text.includes("<code>upstream.tiny</code>: use the tools of Tiny"));
  } finally {
    await fx.close();
    await Deno.remove(file);
    await upstream.close();
  }
});
