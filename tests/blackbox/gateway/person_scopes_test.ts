// An upstream that wants more scopes for one tool (MCP's scope challenge: 403 with a Bearer
// `insufficient_scope` challenge naming the scope, and an OAuth error body that is no JSON-RPC):
// the person is told so with the link, and reconnecting asks for the union of the scopes the
// connection had and those the upstream wants. Against oidc-provider in front of an SDK MCP
// server (testkit/oauth_upstream.ts).
import assert from "node:assert/strict";
import {
  connect,
  connectPageUrl,
  personBrowser,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { until } from "../support/gateway_support.ts";
import type { RpcResult } from "../support/workspace_support.ts";

const text = (message: RpcResult) => message.result.content[0].text as string;

Deno.test("an upstream's 403 insufficient_scope asks the person to reconnect with the link, and reconnecting asks for the scopes it had and the ones wanted", async () => {
  const setup = await startPersonUpstream({ upstream: { stepUpScope: "notes.write" } });
  const { ws, upstream } = setup;
  try {
    const { token } = await ws.token(["app.access", "upstream.crm"]);
    const owner = await personBrowser(setup);
    const first = await owner.get(connectPageUrl(ws));
    assert.equal(first.status, 303, first.text);
    const asked = new URL(first.response.headers.get("Location")!);
    assert.equal(asked.searchParams.get("scope"), "mcp");
    await connect(setup, owner, "alice");
    await until("the upstream's tools", async () => {
      return (await ws.toolNames(token)).includes("crm__write_note");
    });

    const refused = await ws.call(token, "crm__write_note", { text: "hello" });
    assert.equal(refused.status, 200);
    assert.equal(refused.message.result.isError, true, JSON.stringify(refused.message));
    assert.match(
      text(refused.message),
      /needs a permission your connected account has not granted \(notes\.write\)/,
    );
    assert.ok(text(refused.message).includes(connectPageUrl(ws)), text(refused.message));
    // The entry is committed behind the answer (call_audit.ts): it may land just after it.
    const audited = await until(
      "the refused call's audit entry",
      async () => (await ws.audit()).find((e) => e.summary.includes("write_note")),
    );
    assert.match(audited.summary, /\(insufficient_scope\)/);
    // The token still serves the tools it has the scope for.
    const whoami = await ws.call(token, "crm__whoami");
    assert.equal(text(whoami.message), "alice");

    // The link now leads straight to the upstream's sign-in, asking for both.
    const again = await owner.get(connectPageUrl(ws));
    assert.equal(again.status, 303, again.text);
    const reasked = new URL(again.response.headers.get("Location")!);
    assert.equal(reasked.searchParams.get("scope"), "mcp notes.write");
    const done = await connect(setup, owner, "alice");
    assert.equal(done.status, 200, done.text);
    assert.doesNotMatch(done.text, /More permissions wanted/);

    const written = await ws.call(token, "crm__write_note", { text: "hello" });
    assert.equal(written.message.result.isError, undefined, JSON.stringify(written.message));
    assert.equal(text(written.message), "noted: hello");
    assert.equal(upstream.seen.authorizationCode, 2);
  } finally {
    await setup.close();
  }
});
