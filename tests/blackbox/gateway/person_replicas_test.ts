// A person's upstream tokens on more than one Vestibule: two replicas on one PostgreSQL store
// that both need a refresh at the same moment make one at the upstream, and a process killed
// (kill -9) while its refresh is under way loses nothing: once its lease has run out, the next
// process refreshes with the pair the store still holds. Against oidc-provider in front of an
// SDK MCP server (testkit/oauth_upstream.ts).
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { type Config, resolveConfig } from "../../../src/config/config.ts";
import {
  connectionKey,
  type ConnectionRecord,
} from "../../../src/gateway/connect/connection_store.ts";
import { openStore } from "../../../src/store/open.ts";
import type { Store } from "../../../src/store/store.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { startOAuthUpstream } from "../../../testkit/oauth_upstream.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { Browser, followLink, submitForm } from "../support/accounts_browser.ts";
import { until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { startTestServer } from "../support/harness.ts";
import { copyProject, originsEnv, startServerProcess } from "../support/main_process.ts";
import {
  connect,
  personBrowser,
  startPersonUpstream,
  writeKeyFile,
} from "../support/person_upstream_support.ts";
import { PROTOCOL_VERSION, rpcMessage } from "../support/workspace_support.ts";

/** Seconds an upstream access token lives: the refresh comes a quarter of it before expiry. */
const TTL_SECONDS = 4;

/** An agent of `accountId` calling tools through the gateway at `config`'s API origin. */
async function agent(
  config: Config,
  store: Store,
  grant: { accountId: string; businessId: string; clientId: string },
) {
  const { tokens } = await issueGrant({ config, store, now: Date.now }, {
    ...grant,
    scopes: ["app.access", "upstream.crm"],
  });
  let id = 0;
  return async (name: string, args: Record<string, unknown> = {}): Promise<any> => {
    // A connection of its own each time: a pooled one may lead to a process killed since.
    using client = Deno.createHttpClient({});
    const response = await fetch(`${config.apiUrl}/api/mcp`, {
      client,
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        Authorization: `Bearer ${tokens.access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name, arguments: args },
      }),
    });
    if (response.status !== 200) assert.fail(await response.text());
    return (await rpcMessage(response)).result;
  };
}

/** Fails unless whoami answered as `login`. */
function answeredAs(result: any, login = "alice") {
  assert.equal(result.isError, undefined, JSON.stringify(result));
  assert.equal(result.content[0].text, login);
}

/** The connection record as stored (its expiry and lease are in clear). */
async function stored(store: Store, businessId: string, accountId: string) {
  const entry = await store.get<ConnectionRecord>(connectionKey("crm", { businessId, accountId }));
  assert.ok(entry, "the connection is stored");
  return entry.value;
}

Deno.test(
  "two replicas that need a refresh at the same moment make one refresh at the upstream, and both calls succeed",
  async () => {
    const cluster = await startPgCluster();
    try {
      const database = await cluster.database();
      const setup = await startPersonUpstream({
        upstream: { accessTokenTtlSeconds: TTL_SECONDS },
        server: { dataUrl: database },
      });
      const { ws, upstream } = setup;
      const file = await writeUpstreamsFile([
        { name: "crm", title: "Acme CRM", url: upstream.mcpUrl, auth: "person" },
      ]);
      const other = await startTestServer({
        VESTIBULE_UPSTREAMS: file,
        VESTIBULE_UPSTREAM_KEY_FILE: setup.keyFile,
        VESTIBULE_MAIL: setup.outbox.env,
      }, { dataUrl: database });
      try {
        const grant = { accountId: ws.ownerId, businessId: ws.businessId };
        const onA = await agent(ws.server.config, ws.server.store, {
          ...grant,
          clientId: "agent-a",
        });
        const onB = await agent(other.config, other.store, { ...grant, clientId: "agent-b" });
        const owner = await personBrowser(setup);
        const done = await connect(setup, owner, "alice");
        assert.equal(done.status, 200, done.text);
        // B learns the tools from the listing A stored.
        for (const call of [onA, onB]) {
          answeredAs(
            await until("whoami through each replica", async () => {
              const result = await call("crm__whoami");
              return result.isError === undefined && result;
            }),
          );
        }
        const { expiresAt } = await stored(ws.server.store, ws.businessId, ws.ownerId);
        await until("the upstream access token to expire", () => Date.now() > expiresAt!);

        const calls = await Promise.all([onA("crm__whoami"), onB("crm__whoami")]);
        calls.forEach((result) => answeredAs(result));
        assert.equal(upstream.seen.refreshToken, 1, "one refresh across both replicas");
        // Each replica serves the refreshed token from the store: no refresh more.
        answeredAs(await onA("crm__whoami"));
        answeredAs(await onB("crm__whoami"));
        assert.equal(upstream.seen.refreshToken, 1);
        const after = await stored(other.store, ws.businessId, ws.ownerId);
        assert.equal(after.lease, null);
        assert.ok(after.expiresAt! > expiresAt!);
      } finally {
        await other.close();
        await setup.close();
        await Deno.remove(file);
      }
    } finally {
      await cluster.stop();
    }
  },
);

Deno.test("a process killed during a refresh loses nothing: once its lease runs out, the next process's call succeeds", async () => {
  const cluster = await startPgCluster();
  const dir = await copyProject();
  const upstream = await startOAuthUpstream({ accessTokenTtlSeconds: TTL_SECONDS });
  let store: Store | undefined;
  let running: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  try {
    await Deno.mkdir(`${dir}/data`);
    // The start task reads only static/ and data/.
    await Deno.rename(await writeKeyFile(), `${dir}/data/upstream.key`);
    await Deno.writeTextFile(
      `${dir}/data/upstreams.json`,
      JSON.stringify({
        upstreams: [{ name: "crm", title: "Acme CRM", url: upstream.mcpUrl, auth: "person" }],
      }),
    );
    const env = {
      ...originsEnv(),
      VESTIBULE_DATA: await cluster.database(),
      VESTIBULE_UPSTREAMS: "data/upstreams.json",
      VESTIBULE_UPSTREAM_KEY_FILE: "data/upstream.key",
      VESTIBULE_MAIL: "file:data/outbox.jsonl",
      VESTIBULE_RATE_LIMITS: "off",
    };
    const config = resolveConfig(env);
    running = await startServerProcess(dir, env);
    store = await openStore(config);
    const { account, business } = await createAccounts(store, Date.now)
      .createAccountWithBusiness("owner@example.com", "Acme Outdoor");
    const call = await agent(config, store, {
      accountId: account.id,
      businessId: business.id,
      clientId: "agent",
    });

    // The owner signs in through the mailed link and connects their account.
    const owner = new Browser();
    await submitForm(owner, `${config.authUrl}/sign-in`, `${config.authUrl}/sign-in`, {
      email: "owner@example.com",
    });
    const mail = await until("the sign-in mail", async () => {
      const text = await Deno.readTextFile(`${dir}/data/outbox.jsonl`).catch(() => "");
      return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)).at(-1);
    });
    assert.equal((await followLink(owner, mail.link)).status, 303);
    const target = { server: { authUrl: config.authUrl }, businessId: business.id };
    const done = await connect({ ws: target, upstream }, owner, "alice");
    assert.equal(done.status, 200, done.text);
    answeredAs(
      await until("whoami through the gateway", async () => {
        const result = await call("crm__whoami");
        return result.isError === undefined && result;
      }),
    );
    const before = await stored(store, business.id, account.id);
    await until("the upstream access token to expire", () => Date.now() > before.expiresAt!);

    // The refresh reaches the token endpoint and is held there; the process dies meanwhile.
    const hold = upstream.holdTokenRequests();
    const dying = call("crm__whoami").catch((error: Error) => error);
    await hold.held;
    const leased = await stored(store, business.id, account.id);
    assert.ok(leased.lease !== null, "the refresh holds the lease");
    await running.crash();
    running = undefined;
    assert.ok(await dying instanceof Error, "the call died with its process");
    // The upstream answers the held refresh to nobody: that pair is never saved.
    hold.release();
    assert.equal(upstream.seen.refreshToken, 1);

    running = await startServerProcess(dir, env);
    const leaseEnded = leased.lease!.until;
    assert.ok(Date.now() < leaseEnded, "the new process runs while the dead one's lease holds");
    // Every call answers (a dead holder's lease outlasts VESTIBULE_READ_TIMEOUT): a tool error
    // to try again while the lease holds, then the token refreshed by the new process.
    const answered = await until("a call after the dead process's lease", async () => {
      const result = await call("crm__whoami");
      if (result.isError !== true) return result;
      assert.match(result.content[0].text, /try again shortly/, JSON.stringify(result));
      assert.ok(Date.now() < leaseEnded + 1_000, "refused only while the lease holds");
    }, 30_000);
    answeredAs(answered);
    assert.ok(Date.now() >= leaseEnded, "the new process waited for the dead one's lease");
    assert.equal(upstream.seen.refreshToken, 2, "one refresh by the new process");
    const after = await stored(store, business.id, account.id);
    assert.equal(after.status, "connected");
    assert.equal(after.lease, null);
    assert.ok(after.refreshedAt! >= leaseEnded);
  } finally {
    await store?.close();
    if (running) {
      const { code, stderr } = await running.stop();
      assert.equal(code, 0, stderr);
    }
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
    await cluster.stop();
  }
});
