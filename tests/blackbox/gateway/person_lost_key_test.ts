// Losing the key file's key: the stored connections and our registration at the upstream's
// authorization server no longer open. Each person then simply connects again: an agent's call
// is a tool error with the link (the person is asked once, by mail), and the link registers
// Vestibule again instead of failing. `forget-upstream-registration` drops a registration on
// purpose. Against oidc-provider in front of an SDK MCP server (testkit/oauth_upstream.ts).
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { newVaultKey } from "../../../src/gateway/connect/vault.ts";
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import { signInThroughForms } from "../support/accounts_browser.ts";
import { until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { startTestServer, type TestServer } from "../support/harness.ts";
import { originsEnv } from "../support/main_process.ts";
import {
  connect,
  connectPageUrl,
  personBrowser,
  type PersonUpstreamSetup,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { PROTOCOL_VERSION } from "../support/workspace_support.ts";
import { storeFile } from "../support/server_runtime.ts";

/** `crm__whoami` as the holder of `token` at `apiUrl`: the JSON-RPC answer, whatever it is. */
async function whoami(apiUrl: string, token: string): Promise<Record<string, any>> {
  const response = await fetch(`${apiUrl}/api/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL_VERSION,
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "crm__whoami", arguments: {} },
    }),
  });
  assert.equal(response.status, 200);
  return await response.json();
}

Deno.test(
  "after the key file loses its key, each person connects again: the call asks them to, once, and the link registers Vestibule again",
  async () => {
    const dir = await Deno.makeTempDir();
    const storePath = storeFile(`${dir}/store`);
    const origins = originsEnv();
    let setup: PersonUpstreamSetup | null = null;
    let server: TestServer | null = null;
    try {
      setup = await startPersonUpstream({
        env: origins,
        server: { dataUrl: storePath },
      });
      const { ws, upstream, keyFile, outbox } = setup;
      const { businessId } = ws;
      await connect(setup, await personBrowser(setup), "alice");
      const { token } = await ws.token(["app.access", "upstream.crm"]);
      const before = await until("a call that reaches the upstream", async () => {
        const answer = await whoami(ws.server.apiUrl, token);
        return answer.result?.isError === undefined && answer.result;
      });
      assert.equal(before.content[0].text, "alice");
      assert.equal(upstream.seen.registration, 1);
      await ws.close();

      // The same store and origins, restarted on a key file whose only key is a new one.
      await Deno.writeTextFile(keyFile, `${newVaultKey()}\n`);
      const upstreams = await writeUpstreamsFile([
        { name: "crm", title: "Acme CRM", url: upstream.mcpUrl, auth: "person" },
      ]);
      server = await startTestServer({
        ...origins,
        VESTIBULE_UPSTREAMS: upstreams,
        VESTIBULE_UPSTREAM_KEY_FILE: keyFile,
        VESTIBULE_MAIL: outbox.env,
      }, { dataUrl: storePath });
      const link = connectPageUrl({ server, businessId });
      // Nothing the new key could seal again: the connection and the registration are counted.
      const resealed = await adminRunner(server.store, { config: server.config })(
        "reseal-upstream-tokens",
      );
      assert.equal(resealed.code, 0, resealed.err);
      assert.deepEqual(JSON.parse(resealed.out), { resealed: 0, unopened: 2 });

      // A tool error with the link, never an internal error; asked once however often it calls.
      for (let call = 0; call < 2; call++) {
        const answer = await whoami(server.apiUrl, token);
        assert.equal(answer.error, undefined, JSON.stringify(answer));
        assert.equal(answer.result.isError, true, JSON.stringify(answer));
        assert.match(answer.result.content[0].text, /reconnect your account/);
        assert.ok(answer.result.content[0].text.includes(link), answer.result.content[0].text);
      }
      const reconnectMails = async () =>
        (await outbox.read()).filter((m) =>
          m.to === "owner@example.com" && /Reconnect your Acme CRM account/.test(m.subject)
        );
      const mails = await until("the reconnect mail", async () => {
        const found = await reconnectMails();
        return found.length > 0 && found;
      });
      assert.equal(mails.length, 1, "one mail");
      assert.equal(mails[0]!.link, link);
      assert.match(mails[0]!.text, /can no longer be read: its key was replaced/);

      // The link leads to the upstream's sign-in: our registration is made again, not a 500.
      const owner = await signInThroughForms(server.authUrl, outbox, "owner@example.com");
      const followed = await owner.get(link);
      assert.equal(followed.status, 303, followed.text);
      assert.ok(followed.response.headers.get("Location")!.startsWith(upstream.issuer));
      assert.equal(upstream.seen.registration, 2, "registered again");
      const done = await connect({ ws: { server, businessId }, upstream }, owner, "alice");
      assert.equal(done.status, 200, done.text);
      assert.match(done.text, /Connected/);
      const after = await whoami(server.apiUrl, token);
      assert.equal(after.result.isError, undefined, JSON.stringify(after));
      assert.equal(after.result.content[0].text, "alice");
      await Deno.remove(upstreams);
    } finally {
      await server?.close();
      await setup?.upstream.close();
      if (setup) await Deno.remove(setup.keyFile);
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("forget-upstream-registration drops Vestibule's registration at the upstream: the next person to connect registers again", async () => {
  const setup = await startPersonUpstream();
  const { ws, upstream } = setup;
  const run = adminRunner(ws.server.store, { config: ws.server.config });
  try {
    const none = await run("forget-upstream-registration", "--upstream", "crm");
    assert.equal(none.code, 1);
    assert.match(none.err, /no registration is kept for upstream "crm"/);

    await connect(setup, await personBrowser(setup), "alice");
    assert.equal(upstream.seen.registration, 1);
    const forgotten = await run("forget-upstream-registration", "--upstream", "crm");
    assert.equal(forgotten.code, 0, forgotten.err);
    const { forgotten: what } = JSON.parse(forgotten.out);
    assert.equal(what.upstream, "crm");
    assert.equal(what.issuer, upstream.issuer);
    assert.equal(typeof what.clientId, "string");
    assert.doesNotMatch(forgotten.out, /secret/i);
    const logged = await run("operator-log");
    assert.match(logged.out, /Forgot Vestibule's registration at .* for upstream crm/);

    const member = await personBrowser(setup, "member@example.com");
    const done = await connect(setup, member, "bob");
    assert.equal(done.status, 200, done.text);
    assert.equal(upstream.seen.registration, 2, "registered again");
  } finally {
    await setup.close();
  }
});
