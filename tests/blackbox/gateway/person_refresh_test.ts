// Keeping a person's upstream tokens: an access token that expires is refreshed as often as
// needed and no more, the rotated refresh token is the one used next, a refresh the upstream
// refuses for good asks the person to reconnect once (no loop), and a token the upstream
// refuses before we thought it expired is renewed once. Against oidc-provider in front of an
// SDK MCP server (testkit/oauth_upstream.ts) with short-lived access tokens.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import {
  connectionKey,
  type ConnectionRecord,
} from "../../../src/gateway/connect/connection_store.ts";
import {
  connect,
  connectPageUrl,
  personBrowser,
  type PersonUpstreamSetup,
  startPersonUpstream,
} from "../support/person_upstream_support.ts";
import { until } from "../support/gateway_support.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";

/** Seconds an upstream access token lives: the refresh comes a quarter of it before expiry. */
const TTL_SECONDS = 4;

const text = (message: Record<string, any>) => message.result.content[0].text as string;

/** The person's connection record as stored (its expiry and lease are in clear). */
async function record(setup: PersonUpstreamSetup): Promise<ConnectionRecord> {
  const { ws } = setup;
  const key = connectionKey("crm", { businessId: ws.businessId, accountId: ws.ownerId });
  const entry = await ws.server.store.get<ConnectionRecord>(key);
  assert.ok(entry, "the connection is stored");
  return entry.value;
}

/** Waits, as long as the token lives, until the upstream refuses the stored access token. */
async function expired(setup: PersonUpstreamSetup): Promise<void> {
  const { expiresAt } = await record(setup);
  assert.ok(expiresAt !== null);
  await until("the upstream access token to expire", () => Date.now() > expiresAt, 10_000);
}

/** whoami through the gateway; fails unless it answered as `login`. */
async function whoami(setup: PersonUpstreamSetup, token: string, login = "alice") {
  const called = await setup.ws.call(token, "crm__whoami");
  assert.equal(called.status, 200);
  assert.equal(called.message.result.isError, undefined, JSON.stringify(called.message));
  assert.equal(text(called.message), login);
}

/** A connected owner and an agent's token whose calls already reach the upstream. */
async function connected(setup: PersonUpstreamSetup) {
  const { token } = await setup.ws.token(["app.access", "upstream.crm"]);
  const owner = await personBrowser(setup);
  const done = await connect(setup, owner, "alice");
  assert.equal(done.status, 200, done.text);
  await until("the upstream's tools", async () => {
    const names = await setup.ws.toolNames(token);
    return names.includes("crm__whoami");
  });
  await whoami(setup, token);
  return { owner, token };
}

Deno.test("calls keep reaching the upstream across token expiry, with one refresh per expiry and the rotated refresh token used next", async () => {
  // A public client: the provider rotates its refresh token on each use and ends the whole
  // grant when a used one comes again, so the second refresh works only with the saved one.
  const setup = await startPersonUpstream({
    upstream: { accessTokenTtlSeconds: TTL_SECONDS, publicClientsOnly: true },
  });
  const { upstream } = setup;
  try {
    const { token } = await connected(setup);
    assert.equal((await record(setup)).client.authMethod, "none");
    const first = await record(setup);
    assert.equal(upstream.seen.refreshToken, 0);

    for (const round of [1, 2]) {
      await expired(setup);
      // Several calls after expiry, one refresh.
      await Promise.all([whoami(setup, token), whoami(setup, token)]);
      await whoami(setup, token);
      assert.equal(upstream.seen.refreshToken, round, `refreshes after expiry ${round}`);
    }
    const now = await record(setup);
    assert.equal(now.status, "connected");
    assert.ok(now.refreshedAt !== null && now.refreshedAt > first.obtainedAt);
    assert.notDeepEqual(now.tokens, first.tokens, "the rotated pair is saved");
    // Within a token's life, no refresh at all.
    await whoami(setup, token);
    assert.equal(upstream.seen.refreshToken, 2);
  } finally {
    await setup.close();
  }
});

Deno.test("a refresh revoked upstream asks the person once to reconnect, with no retry loop, and reconnecting mends it", async () => {
  const receiver = await startTestReceiver();
  const setup = await startPersonUpstream({
    upstream: { accessTokenTtlSeconds: TTL_SECONDS },
    env: receiver.env,
  });
  const { upstream, ws, outbox } = setup;
  const reconnectMails = async () =>
    (await outbox.read()).filter((m) =>
      m.to === "owner@example.com" && /Reconnect your Acme CRM account/.test(m.subject)
    );
  const failures = async () =>
    (await ws.audit()).filter((e) => e.action === "upstream_refresh_failed");
  const failedEvents = () => receiver.accepted.filter((e) => e.type === "upstream.refresh_failed");
  try {
    const { owner, token } = await connected(setup);
    await upstream.revokeGrantsOf("alice");
    await expired(setup);

    const refused = await ws.call(token, "crm__whoami");
    assert.equal(refused.status, 200);
    assert.equal(refused.message.result.isError, true, JSON.stringify(refused.message));
    const said = text(refused.message);
    assert.match(said, /reconnect/);
    assert.ok(said.includes(connectPageUrl(ws)), said);
    assert.equal(upstream.seen.refreshToken, 1);

    const mails = await until("the reconnect mail", async () => {
      const found = await reconnectMails();
      return found.length > 0 && found;
    });
    assert.equal(mails.length, 1);
    assert.equal(mails[0]!.link, connectPageUrl(ws));
    await until("the refresh_failed event", () => failedEvents().length > 0);
    const account = await owner.get(`${ws.server.authUrl}/account`);
    assert.match(account.text, /data-upstream="crm" data-status="needs_reconnect"/);

    // Further calls, one at a time and at once: the same answer, and nothing asks upstream.
    for (const _ of [1, 2]) {
      const again = await ws.call(token, "crm__whoami");
      assert.equal(again.message.result.isError, true);
      assert.equal(text(again.message), said);
    }
    await Promise.all([1, 2, 3].map(() => ws.call(token, "crm__echo", { text: "x" })));
    assert.equal(upstream.seen.refreshToken, 1, "no refresh after the one that failed");
    assert.equal((await reconnectMails()).length, 1, "one mail");
    assert.equal((await failures()).length, 1, "one audit entry");
    assert.equal(failedEvents().length, 1, "one event");
    const [entry] = await failures();
    assert.doesNotMatch(JSON.stringify(entry), /eyJ/, "no token in the audit log");

    // Reconnecting mends it: calls reach the upstream as them again.
    const done = await connect(setup, owner, "alice");
    assert.equal(done.status, 200, done.text);
    await whoami(setup, token);
    const after = await owner.get(`${ws.server.authUrl}/account`);
    assert.match(after.text, /data-upstream="crm" data-status="connected"/);
    assert.equal((await record(setup)).problem, null);
    assert.equal(upstream.seen.refreshToken, 1);
  } finally {
    await setup.close();
    await receiver.close();
  }
});

Deno.test("a token the upstream refuses before we thought it expired is refreshed once and the call retried", async () => {
  // The gateway's clock, set back after the token expired upstream: it still thinks it valid.
  let skew = 0;
  const setup = await startPersonUpstream({
    upstream: { accessTokenTtlSeconds: TTL_SECONDS },
    server: { now: () => Date.now() + skew },
  });
  const { upstream } = setup;
  try {
    const { token } = await connected(setup);
    await expired(setup);
    skew = -10_000;
    const calls = upstream.seen.mcpCalls;
    await whoami(setup, token);
    assert.equal(upstream.seen.refreshToken, 1, "one refresh");
    assert.equal(upstream.seen.mcpCalls, calls + 1, "one retried call reached the tool");
    // The renewed token serves the next calls without another refresh.
    await whoami(setup, token);
    assert.equal(upstream.seen.refreshToken, 1);
    assert.equal((await record(setup)).status, "connected");
  } finally {
    await setup.close();
  }
});
