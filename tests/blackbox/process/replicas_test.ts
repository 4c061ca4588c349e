// Two real server processes (main.ts with the start task's flags) on one store, behind a
// round-robin HTTP proxy (support/replicas.ts), as a load balancer would put them: every request goes to
// the next replica, so each multi-step flow crosses replicas (issue 13, point 4).
import assert from "node:assert/strict";
import { Browser, followLink, hiddenField, submitForm } from "../support/accounts_browser.ts";
import { copyProject } from "../support/main_process.ts";
import {
  type Agent,
  callTool,
  CLIENT_HEADER,
  connectAgent,
  type Deployment,
  fetchAs,
  mailedLink,
  MCP_HEADERS,
  REDIRECT,
  REGISTRATIONS_PER_ADDRESS,
  type Replica,
  REPLICA_HEADER,
  signUp,
  tokenRequest,
  withDeployment,
} from "../support/replicas.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";

Deno.test("replicas: two processes on one KV file behind a round-robin proxy", async (t) => {
  const dir = await copyProject();
  try {
    await withDeployment(dir, {}, (d, replicas) => replicaSteps(t, d, replicas));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("replicas: two processes on one PostgreSQL database behind a round-robin proxy", async (t) => {
  const cluster = await startPgCluster();
  const dir = await copyProject();
  try {
    const store = { VESTIBULE_DATA: await cluster.database() };
    await withDeployment(dir, store, (d, replicas) => replicaSteps(t, d, replicas));
  } finally {
    await Deno.remove(dir, { recursive: true });
    await cluster.stop();
  }
});

/** Every multi-step flow, each step on the next replica. */
async function replicaSteps(t: Deno.TestContext, d: Deployment, replicas: Replica[]) {
  await t.step("one signing key, published by both", async () => {
    const kids = [];
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${d.auth}/api/auth/jwks`);
      const { keys } = await response.json();
      kids.push({
        replica: response.headers.get(REPLICA_HEADER),
        kids: keys.map((k: { kid: string }) => k.kid),
      });
    }
    assert.deepEqual(kids.map((k) => k.replica).sort(), ["0", "1"]);
    assert.equal(kids[0]!.kids.length, 1);
    assert.deepEqual(kids[1]!.kids, kids[0]!.kids);
  });

  const owner = await signUp(d, "owner@example.com", "Acme Replicated");
  let agent: Agent;
  await t.step(
    "the human and agent flow works with every step on the next replica",
    async () => {
      agent = await connectAgent(d, owner, "app.access members.read members.request");
      const business = await callTool(d, agent.tokens.access_token, "get_business");
      assert.equal(business.name, "Acme Replicated");
      const refreshed = await tokenRequest(d, {
        grant_type: "refresh_token",
        refresh_token: String(agent.tokens.refresh_token),
        client_id: agent.clientId,
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
      agent = { ...agent, tokens: refreshed.json };
      assert.equal(
        (await callTool(d, agent.tokens.access_token, "get_business")).name,
        "Acme Replicated",
      );
    },
  );

  await t.step("a tools/list cursor of one replica is taken by the other", async () => {
    const list = async (params: Record<string, unknown>) => {
      const response = await fetch(`${d.api}/api/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${agent.tokens.access_token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params }),
      });
      return { replica: response.headers.get(REPLICA_HEADER), message: await response.json() };
    };
    const first = await list({});
    const cursor = first.message.result.nextCursor;
    assert.equal(typeof cursor, "string");
    const second = await list({ cursor });
    assert.notEqual(second.replica, first.replica);
    assert.equal(second.message.error, undefined, JSON.stringify(second.message.error));
    assert.ok(second.message.result.tools.length > 0);
  });

  await t.step("a refresh raced on both replicas gets one answer", async () => {
    const fields = {
      grant_type: "refresh_token",
      refresh_token: String(agent.tokens.refresh_token),
      client_id: agent.clientId,
    };
    const [first, second] = await Promise.all([
      tokenRequest(d, fields),
      tokenRequest(d, fields),
    ]);
    assert.deepEqual([first.replica, second.replica].sort(), ["0", "1"]);
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.equal(second.status, 200, JSON.stringify(second.json));
    assert.deepEqual(second.json, first.json, "the loser gets the winner's answer");
    agent = { ...agent, tokens: first.json };
    const next = await tokenRequest(d, {
      ...fields,
      refresh_token: String(first.json.refresh_token),
    });
    assert.equal(next.status, 200, "the one successor works");
    agent = { ...agent, tokens: next.json };
  });

  await t.step("one gate approved on both replicas at once applies once", async () => {
    const gate = await callTool(d, agent.tokens.access_token, "request_access_change", {
      change: "invite",
      email: "invitee@example.com",
    });
    assert.equal(gate.status, "pending");
    const page = await owner.get(gate.approvalUrl);
    assert.equal(page.status, 200, page.text);
    const csrf = hiddenField(page.text, "csrf");
    const decisions = await Promise.all([
      fetchAs(owner, gate.approvalUrl, { csrf, decision: "approve" }),
      fetchAs(owner, gate.approvalUrl, { csrf, decision: "approve" }),
    ]);
    assert.deepEqual(decisions.map((r) => r.replica).sort(), ["0", "1"]);
    assert.deepEqual(decisions.map((r) => r.status).sort(), [303, 409]);
    const approval = await callTool(d, agent.tokens.access_token, "get_approval", {
      gateId: gate.gateId,
    });
    assert.equal(approval.status, "approved");
    assert.equal(approval.applied, true);
    const { invitations } = await callTool(d, agent.tokens.access_token, "list_members");
    assert.equal(
      invitations.filter((i: { email: string }) => i.email === "invitee@example.com").length,
      1,
    );
  });

  await t.step(
    "one address's registrations are limited across both replicas together",
    async () => {
      const answers = [];
      for (let i = 0; i < REGISTRATIONS_PER_ADDRESS + 2; i++) {
        const response = await fetch(`${d.auth}/api/auth/oauth2/register`, {
          method: "POST",
          headers: { "Content-Type": "application/json", [CLIENT_HEADER]: "198.51.100.7" },
          body: JSON.stringify({ redirect_uris: [REDIRECT] }),
        });
        await response.body?.cancel();
        answers.push({
          status: response.status,
          replica: response.headers.get(REPLICA_HEADER),
        });
      }
      assert.deepEqual(new Set(answers.map((a) => a.replica)), new Set(["0", "1"]));
      assert.deepEqual(
        answers.map((a) => a.status),
        [...Array(REGISTRATIONS_PER_ADDRESS).fill(201), 429, 429],
      );
      const elsewhere = await fetch(`${d.auth}/api/auth/oauth2/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json", [CLIENT_HEADER]: "198.51.100.8" },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      await elsewhere.body?.cancel();
      assert.equal(elsewhere.status, 201, "another address has its own budget");
    },
  );

  await t.step(
    "after kill -9 of one replica, the other serves a whole sign-up, nothing lost",
    async () => {
      // The sign-up mail is asked for, then a replica dies before the link is opened.
      const browser = new Browser();
      const seen = d.smtp.received.length;
      const sent = await submitForm(browser, `${d.auth}/sign-up`, `${d.auth}/sign-up`, {
        email: "second@example.com",
        business: "Second Shop",
      });
      assert.equal(sent.status, 200, sent.text);
      const link = await mailedLink(d, "second@example.com", seen);
      replicas[0]!.crash();
      assert.equal((await replicas[0]!.exited).signal, "SIGKILL");
      assert.equal((await followLink(browser, link)).status, 303);
      const fresh = await connectAgent(d, browser, "app.access");
      assert.equal(
        (await callTool(d, fresh.tokens.access_token, "get_business")).name,
        "Second Shop",
      );
      // What the first owner and agent had before the crash is all there.
      assert.equal((await owner.get(`${d.auth}/account`)).status, 200);
      const refreshed = await tokenRequest(d, {
        grant_type: "refresh_token",
        refresh_token: String(agent.tokens.refresh_token),
        client_id: agent.clientId,
      });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.json));
      assert.equal(refreshed.replica, "1");
    },
  );

  await t.step("each mail was sent once", () => {
    const ids = d.smtp.received.map((m) => m.headers.get("Message-ID"));
    assert.equal(new Set(ids).size, ids.length);
    const invitations = d.smtp.received.filter((m) => m.envelopeTo.includes("invitee@example.com"));
    assert.equal(invitations.length, 1);
  });
}
