// The gateway on two replicas: two main.ts processes on one PostgreSQL database with the same
// upstreams file, each with its own sessions to the tiny upstream. What one replica asks, the
// other decides: a gated call requested on A and approved on B is made exactly once, and A
// reads its result; a definition change approved on B is served by A within seconds; a task
// created on A is read and cancelled through B, an upstream's own task relayed by A too.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { resolveConfig } from "../../../src/config/config.ts";
import { openStore } from "../../../src/store/open.ts";
import { issueGrant } from "../../../testkit/issue_grant.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { startTaskUpstream } from "../../../testkit/task_upstream.ts";
import { Browser, followLink, hiddenField, submitForm } from "../support/accounts_browser.ts";
import { listed, until } from "../support/gateway_support.ts";
import {
  copyProject,
  originsEnv,
  type ServerProcess,
  startServerProcess,
} from "../support/main_process.ts";
import { PROTOCOL_VERSION, type RpcResult } from "../support/workspace_support.ts";

const ECHO: TinyTool = {
  definition: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
  handler: (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }] }),
};

/** One replica as a test speaks to it: its origins, an agent's token, and MCP calls. */
interface Replica {
  readonly env: Record<string, string>;
  readonly process: ServerProcess;
  token: string;
  post(token: string, message: unknown): Promise<Response>;
  call(name: string, args?: Record<string, unknown>): Promise<RpcResult>;
}

Deno.test("replicas share approvals and pins, each with its own upstream sessions", async (t) => {
  const cluster = await startPgCluster();
  const dir = await copyProject();
  const upstream = startTinyUpstream({ tools: [ECHO, ADD_TOOL] });
  const tasking = startTaskUpstream();
  const replicas: Replica[] = [];
  let store: Awaited<ReturnType<typeof openStore>> | undefined;
  try {
    await Deno.mkdir(`${dir}/data`);
    await Deno.writeTextFile(
      `${dir}/data/upstreams.json`,
      JSON.stringify({
        upstreams: [
          { name: "tiny", title: "Tiny", url: upstream.url, gated: ["add"] },
          { name: "up", title: "Upstream", url: tasking.url },
        ],
      }),
    );
    const shared = {
      VESTIBULE_DATA: await cluster.database(),
      VESTIBULE_UPSTREAMS: "data/upstreams.json",
      VESTIBULE_MAIL: "file:data/outbox.jsonl",
      VESTIBULE_RATE_LIMITS: "off",
    };
    // Each replica answers on its own origins: a test can say which one it speaks to.
    const envs = [{ ...shared, ...originsEnv() }, { ...shared, ...originsEnv() }];
    const processes = await Promise.all(envs.map((env) => startServerProcess(dir, env)));
    store = await openStore(resolveConfig(envs[0]!));
    const { account, business } = await createAccounts(store, Date.now)
      .createAccountWithBusiness("owner@example.com", "Acme Outdoor");
    for (const [i, env] of envs.entries()) {
      const config = resolveConfig(env);
      const { tokens } = await issueGrant({ config, store, now: Date.now }, {
        accountId: account.id,
        businessId: business.id,
        // One agent per replica: a new grant of the same client would end the other's.
        clientId: `agent-${i}`,
        scopes: ["app.access", "upstream.tiny", "upstream.up"],
      });
      let id = 0;
      const post = (token: string, message: unknown) =>
        fetch(`${config.apiUrl}/api/mcp`, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
            Authorization: `Bearer ${token}`,
          },
          body: JSON.stringify(message),
        });
      replicas.push({
        env,
        process: processes[i]!,
        token: tokens.access_token,
        post,
        async call(name, args = {}) {
          const response = await post(tokens.access_token, {
            jsonrpc: "2.0",
            id: ++id,
            method: "tools/call",
            params: { name, arguments: args },
          });
          if (response.status !== 200) assert.fail(await response.text());
          return (await response.json()).result;
        },
      });
    }
    const [a, b] = replicas as [Replica, Replica];
    const bAuth = b.env["VESTIBULE_AUTH_URL"]!;
    // The owner signs in on replica B.
    const owner = new Browser();
    await submitForm(owner, `${bAuth}/sign-in`, `${bAuth}/sign-in`, {
      email: "owner@example.com",
    });
    const mail = await until("the sign-in mail", async () => {
      const text = await Deno.readTextFile(`${dir}/data/outbox.jsonl`).catch(() => "");
      return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)).at(-1);
    });
    assert.equal((await followLink(owner, mail.link)).status, 303);
    const approve = async (gateId: string) => {
      const url = `${bAuth}/approvals/${gateId}`;
      const page = await owner.get(url);
      assert.equal(page.status, 200, page.text);
      const decided = await owner.post(url, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      assert.equal(decided.status, 303, decided.text);
    };

    await t.step("each replica lists and calls the upstream through its own session", async () => {
      const before = upstream.sessions;
      for (const replica of [a, b]) {
        const tools = await listed(replica, replica.token);
        assert.deepEqual([...tools.keys()], ["tiny__echo", "tiny__add"]);
        const result = await replica.call("tiny__echo", { from: replica.env["VESTIBULE_API_URL"] });
        assert.equal(result.isError, undefined, JSON.stringify(result));
      }
      assert.ok(upstream.sessions >= 2 && before >= 2, `${before} ${upstream.sessions}`);
      assert.equal(upstream.calls, 2);
    });

    await t.step(
      "a call requested on A and approved on B is made once; A reads its result",
      async () => {
        const pending = (await a.call("tiny__add", { a: 2, b: 3 })).structuredContent;
        assert.equal(pending.status, "pending");
        assert.ok(pending.approvalUrl.startsWith(a.env["VESTIBULE_AUTH_URL"]));
        const calls = upstream.calls;
        await approve(pending.gateId);
        const view = await until("the result on A", async () => {
          const got = (await a.call("get_approval", { gateId: pending.gateId })).structuredContent;
          return got.result === undefined ? undefined : got;
        });
        assert.equal(view.status, "approved");
        assert.deepEqual(view.result.structuredContent, { sum: 5 });
        assert.equal(upstream.calls, calls + 1, "exactly one call");
        assert.deepEqual(upstream.lastCall?.arguments, { a: 2, b: 3 });
      },
    );

    await t.step("a definition change approved on B is served by A within seconds", async () => {
      const changed: TinyTool = {
        ...ADD_TOOL,
        definition: { ...ADD_TOOL.definition, description: "Adds two numbers, carefully." },
      };
      upstream.setTools([ECHO, changed]);
      // As after an upstream restart: each replica's next request opens a session and lists.
      upstream.dropSessions();
      for (const replica of [a, b]) {
        assert.equal((await replica.call("tiny__echo")).isError, undefined);
      }
      const refused = await until("the change held on B", async () => {
        const result = await b.call("tiny__add", { a: 1, b: 1 });
        return result.isError === true ? result : undefined;
      });
      const gateId = (refused.content[0].text as string).split("/approvals/")[1]!;
      // A has the held view in hand (pins re-read at most every 2 s) when B approves.
      const held = (await listed(a, a.token)).get("tiny__add");
      assert.ok(held.description.startsWith("Adds two numbers. "), held.description);
      await approve(gateId);
      const started = Date.now();
      await until("A serving the approved definition", async () => {
        const add = (await listed(a, a.token)).get("tiny__add");
        return add.description.startsWith("Adds two numbers, carefully.") || undefined;
      });
      const waited = Date.now() - started;
      assert.ok(waited < 5_000, `${waited} ms`);
      const pending = (await a.call("tiny__add", { a: 1, b: 2 })).structuredContent;
      assert.equal(pending.status, "pending", "callable again: a new gated call");
    });

    await t.step("a task created on A is read and cancelled through B", async () => {
      const TASKS = "io.modelcontextprotocol/tasks";
      const modern = (env: Record<string, string>, token: string, method: string, params: object) =>
        fetch(`${env["VESTIBULE_API_URL"]}/api/mcp`, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
            "Mcp-Name": (params as Record<string, string>)["taskId"] ??
              (params as Record<string, string>)["name"]!,
            Authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method,
            params: {
              ...params,
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
              },
            },
          }),
        }).then((response) => response.json());
      const created = await modern(a.env, a.token, "tools/call", {
        name: "tiny__add",
        arguments: { a: 4, b: 4 },
      });
      assert.equal(created.result.resultType, "task", JSON.stringify(created));
      const { taskId } = created.result;
      const relayed = await modern(a.env, a.token, "tools/call", {
        name: "up__research",
        arguments: { topic: "replicas" },
      });
      assert.match(relayed.result.taskId, /^relayed-/, JSON.stringify(relayed));
      const toCancel = await modern(a.env, a.token, "tools/call", {
        name: "up__research",
        arguments: { topic: "cancel on B" },
      });
      // The same agent on B (a new grant of its client ends A's: this step comes last).
      const { tokens } = await issueGrant({
        config: resolveConfig(b.env),
        store: store!,
        now: Date.now,
      }, {
        accountId: account.id,
        businessId: business.id,
        clientId: "agent-0",
        scopes: ["app.access", "upstream.tiny", "upstream.up"],
      });
      const onB = tokens.access_token;
      const read = await modern(b.env, onB, "tasks/get", { taskId });
      assert.equal(read.result.status, "working", JSON.stringify(read));
      const foreign = await modern(b.env, b.token, "tasks/get", { taskId });
      assert.equal(foreign.error.code, -32602, "agent-1 finds no such task");
      const cancelled = await modern(b.env, onB, "tasks/cancel", { taskId });
      assert.equal(cancelled.result.resultType, "complete", JSON.stringify(cancelled));
      assert.equal((await modern(b.env, onB, "tasks/get", { taskId })).result.status, "cancelled");
      const page = await owner.get(`${bAuth}/approvals/${taskId}`);
      assert.match(page.text, /<span id="gate-status">Withdrawn by the agent that asked/);
      // B follows the upstream task A started, through its own session.
      const [first, second] = tasking.tasks;
      const following = await modern(b.env, onB, "tasks/get", { taskId: relayed.result.taskId });
      assert.equal(following.result.status, "working", JSON.stringify(following));
      tasking.finish(first!.taskId, "report of the replicas");
      const done = await modern(b.env, onB, "tasks/get", { taskId: relayed.result.taskId });
      assert.equal(done.result.status, "completed", JSON.stringify(done));
      assert.deepEqual(done.result.result.content, [
        { type: "text", text: "report of the replicas" },
      ]);
      const gone = await modern(b.env, onB, "tasks/cancel", { taskId: toCancel.result.taskId });
      assert.equal(gone.result.resultType, "complete", JSON.stringify(gone));
      assert.equal(second!.status, "cancelled");
    });
  } finally {
    await store?.close();
    for (const replica of replicas) {
      const { code, stderr } = await replica.process.stop();
      assert.equal(code, 0, stderr);
    }
    await upstream.close();
    await tasking.close();
    await Deno.remove(dir, { recursive: true });
    await cluster.stop();
  }
});
