// What becomes of people's upstream connections as the operator acts: removing a member,
// deleting an account or a business revoke their upstream tokens and delete the connections;
// the key file's rotation keeps connections working through restarts; a backup holds no token
// in clear.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { loadVault, newVaultKey, type Sealed } from "../../../src/gateway/connect/vault.ts";
import type { Store } from "../../../src/store/store.ts";
import { adminRunner } from "../../operator/cli/admin_runner.ts";
import { until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { startTestServer, type TestServer } from "../support/harness.ts";
import { originsEnv } from "../support/main_process.ts";
import {
  connect,
  personBrowser,
  type PersonUpstreamSetup,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { PROTOCOL_VERSION } from "../support/workspace_support.ts";
import { storeFile } from "../support/server_runtime.ts";

const text = (message: Record<string, any>) => message.result.content[0].text as string;

/** The connection records of the business, by account id. */
async function connectionsOf(store: Store, businessId: string) {
  const found = new Map<string, { key: Deno.KvKey; tokens: Sealed }>();
  for await (
    const entry of store.list<{ tokens: Sealed }>(["ws", businessId, "upstream_connection"])
  ) {
    found.set(String(entry.key[4]), { key: entry.key as Deno.KvKey, tokens: entry.value.tokens });
  }
  return found;
}

/** `crm__whoami` as the holder of `token`, once the listing of the upstream is known. */
async function whoami(apiUrl: string, token: string): Promise<string> {
  const called = await until("a call that reaches the upstream", async () => {
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
    const message = await response.json();
    return message.result?.isError === undefined && message.result && message;
  });
  return text(called);
}

Deno.test("removing a member, deleting an account and deleting a business revoke the person's upstream tokens and delete their connections", async () => {
  const setup = await startPersonUpstream();
  const { ws, upstream } = setup;
  const run = adminRunner(ws.server.store, { config: ws.server.config });
  const json = (out: string) => JSON.parse(out);
  try {
    await connect(setup, await personBrowser(setup), "alice");
    await connect(setup, await personBrowser(setup, "member@example.com"), "bob");
    assert.deepEqual(
      [...(await connectionsOf(ws.server.store, ws.businessId)).keys()].sort(),
      [ws.ownerId, ws.memberId].sort(),
    );
    const owner = await ws.token(["app.access", "upstream.crm"]);
    assert.equal(await whoami(ws.server.apiUrl, owner.token), "alice");

    let revocations = upstream.seen.revocation;
    const removed = await run(
      "remove-member",
      "--business",
      ws.businessId,
      "--email",
      "member@example.com",
    );
    assert.equal(removed.code, 0, removed.err);
    assert.deepEqual(json(removed.out).upstreamConnections, { disconnected: 1, revoked: true });
    assert.ok(upstream.seen.revocation > revocations, "the upstream was asked to revoke");
    assert.deepEqual([...(await connectionsOf(ws.server.store, ws.businessId)).keys()], [
      ws.ownerId,
    ]);
    assert.equal(await whoami(ws.server.apiUrl, owner.token), "alice", "others' stay");

    const added = await run(
      "add-member",
      "--business",
      ws.businessId,
      "--email",
      "carol@example.com",
    );
    assert.equal(added.code, 0, added.err);
    const carolId = json(added.out).accountId;
    await connect(setup, await personBrowser(setup, "carol@example.com"), "carol");
    revocations = upstream.seen.revocation;
    const deleted = await run("delete-account", "--email", "carol@example.com");
    assert.equal(deleted.code, 0, deleted.err);
    assert.deepEqual(json(deleted.out).upstreamConnections, { disconnected: 1, revoked: true });
    assert.ok(upstream.seen.revocation > revocations, "the upstream was asked to revoke");
    assert.ok(!(await connectionsOf(ws.server.store, ws.businessId)).has(carolId));

    revocations = upstream.seen.revocation;
    const gone = await run("delete-business", "--business", ws.businessId);
    assert.equal(gone.code, 0, gone.err);
    assert.deepEqual(json(gone.out).upstreamConnections, { disconnected: 1, revoked: true });
    assert.ok(upstream.seen.revocation > revocations, "the upstream was asked to revoke");
    assert.equal((await connectionsOf(ws.server.store, ws.businessId)).size, 0);
  } finally {
    await setup.close();
  }
});

Deno.test(
  "rotating the key file keeps connections working: new key first, reseal, old key gone, and a backup holds no token in clear",
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
      const { businessId, ownerId } = ws;
      await connect(setup, await personBrowser(setup), "alice");
      const { token } = await ws.token(["app.access", "upstream.crm"]);
      assert.equal(await whoami(ws.server.apiUrl, token), "alice");
      const oldKey = (await Deno.readTextFile(keyFile)).trim();
      const sealedFirst = (await connectionsOf(ws.server.store, businessId)).get(ownerId)!;
      await ws.close();

      // The same store and origins (the agent's token is in the store), restarted on a key file.
      const upstreams = await writeUpstreamsFile([
        { name: "crm", title: "Acme CRM", url: upstream.mcpUrl, auth: "person" },
      ]);
      const restart = async () =>
        await startTestServer({
          ...origins,
          VESTIBULE_UPSTREAMS: upstreams,
          VESTIBULE_UPSTREAM_KEY_FILE: keyFile,
          VESTIBULE_MAIL: outbox.env,
        }, { dataUrl: storePath });

      const newKey = newVaultKey();
      await Deno.writeTextFile(keyFile, `${newKey}\n${oldKey}\n`);
      server = await restart();
      assert.equal(await whoami(server.apiUrl, token), "alice", "the old key still opens them");

      const run = adminRunner(server.store, { config: server.config });
      const resealed = await run("reseal-upstream-tokens");
      assert.equal(resealed.code, 0, resealed.err);
      // The connection's tokens, and the client secret of our registration at the upstream.
      assert.deepEqual(JSON.parse(resealed.out), { resealed: 2, unopened: 0 });
      const sealedNow = (await connectionsOf(server.store, businessId)).get(ownerId)!;
      assert.notEqual(sealedNow.tokens.k, sealedFirst.tokens.k, "sealed under the new key");
      const registration = await server.store.get<{ secret: Sealed }>([
        "upstream_registration",
        "crm",
      ]);
      assert.equal(registration?.value.secret.k, sealedNow.tokens.k);
      await server.close();

      await Deno.writeTextFile(keyFile, `${newKey}\n`);
      server = await restart();
      assert.equal(await whoami(server.apiUrl, token), "alice", "the new key alone opens them");

      // The tokens as Vestibule holds them, opened with the key (the context is the record's
      // key, connection_store.ts), then looked for in the backup.
      const vault = await loadVault(keyFile);
      const { key, tokens } = (await connectionsOf(server.store, businessId)).get(ownerId)!;
      const pair = JSON.parse(await vault.open(`connection:${key.join("/")}`, tokens));
      assert.match(pair.accessToken, /^eyJ/);
      assert.equal(typeof pair.refreshToken, "string");
      const backup = await adminRunner(server.store, { config: server.config })("export");
      assert.equal(backup.code, 0, backup.err);
      assert.ok(backup.out.includes("upstream_connection"), "the backup carries the connection");
      assert.ok(!backup.out.includes(pair.accessToken), "no access token in clear");
      assert.ok(!backup.out.includes(pair.refreshToken), "no refresh token in clear");
      await Deno.remove(upstreams);
    } finally {
      await server?.close();
      await setup?.upstream.close();
      if (setup) await Deno.remove(setup.keyFile);
      await Deno.remove(dir, { recursive: true });
    }
  },
);
