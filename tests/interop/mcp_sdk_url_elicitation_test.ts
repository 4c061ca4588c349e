// The official MCP SDK v1 client (1.32.2), unmodified, declares URL-mode elicitation and calls a
// tool of an upstream its person has not connected yet: the workspace answers -32042 (MCP
// 2025-11-25 URLElicitationRequiredError), which the SDK hands its application as a
// UrlElicitationRequiredError with the link. The test plays the person: it follows the link
// signed in, connects through the upstream's own sign-in (oidc-provider), and the same client's
// next call reaches the upstream as them. The SDK's initialize and its calls are separate HTTP
// requests, so this also proves the declared modes are remembered without an MCP session.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  UrlElicitationRequiredError,
} from "npm:@modelcontextprotocol/sdk@^1.32.2/types.js";
import {
  connect,
  connectPageUrl,
  personBrowser,
  startPersonUpstream,
} from "../blackbox/support/person_upstream_support.ts";
import { until } from "../blackbox/support/gateway_support.ts";

Deno.test("MCP SDK 1.32.2 with URL elicitation: -32042 carries the connect link, the person connects, the call then works", async () => {
  const setup = await startPersonUpstream();
  const { ws } = setup;
  const client = new Client(
    { name: "vestibule-url-elicitation", version: "1.0.0" },
    { capabilities: { elicitation: { url: {} } } },
  );
  // What a real application registers; the workspace sends no server-to-client requests (it
  // keeps no stream), so the link arrives in the error instead.
  const asked: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request: unknown) => {
    asked.push(request);
    return Promise.resolve({ action: "cancel" });
  });
  try {
    // Someone connected, so the upstream's tools are known; the member has not.
    const owner = await ws.token(["app.access", "upstream.crm"]);
    assert.equal((await connect(setup, await personBrowser(setup), "alice")).status, 200);
    await until(
      "the upstream's tools",
      async () => (await ws.toolNames(owner.token)).includes("crm__whoami"),
    );

    const { token } = await ws.token(["app.access", "upstream.crm"], { accountId: ws.memberId });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ws.server.apiUrl}/api/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const refused = await client.callTool({ name: "crm__whoami", arguments: {} }).then(
      () => assert.fail("the call was made without the person's connection"),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof UrlElicitationRequiredError, String(refused));
    const [elicitation] = refused.elicitations;
    assert.equal(elicitation?.mode, "url");
    assert.ok(elicitation.url.startsWith(`${connectPageUrl(ws)}&for=`), elicitation.url);
    assert.match(elicitation.message, /Connect your Acme CRM account/);

    const member = await personBrowser(setup, "member@example.com");
    const done = await connect(setup, member, "bob", elicitation.url);
    assert.equal(done.status, 200, done.text);

    const called = await client.callTool({ name: "crm__whoami", arguments: {} });
    assert.equal(called.isError, undefined, JSON.stringify(called));
    assert.deepEqual(called.structuredContent, { sub: "bob" });
    assert.deepEqual(asked, []);
  } finally {
    await client.close();
    await setup.close();
  }
});
