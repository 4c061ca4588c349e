import assert from "node:assert/strict";
import { OWNER_ONLY_SCOPES, type Scope } from "../../../src/oauth/scopes.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { ATTEMPT_TTL_MS } from "../../../src/workspace/domain/connection_tests.ts";
import { type RpcResult, startWorkspaceServer } from "../support/workspace_support.ts";
import { listEveryTool, toolsList } from "../../mcp/wire.ts";

Deno.test("workspace tools: catalogue and scope per tool", async (t) => {
  const ws = await startWorkspaceServer();
  try {
    const { token: base } = await ws.token(["app.access"]);
    const { tools, pages } = await listEveryTool(async (cursor) => {
      const response = await ws.post(base, toolsList(cursor));
      assert.equal(response.status, 200);
      return (await response.json()).result;
    });
    assert.ok(pages > 1, "the catalogue spans more than one page");
    const scopes = [...new Set(tools.map((tool) => tool._meta["vestibule/scope"] as string))];
    const { token: everything } = await ws.token(scopes);

    await t.step("tools/list shows every tool, each once, with its scope", () => {
      assert.equal(new Set(tools.map((tool) => tool.name)).size, tools.length);
      for (const tool of tools) {
        const scope = tool._meta["vestibule/scope"];
        assert.ok(tool.description.includes(`Requires scope ${scope}.`), tool.name);
        assert.equal(typeof tool.title, "string", tool.name);
        assert.equal(tool.inputSchema.type, "object", tool.name);
        assert.equal(tool.outputSchema.type, "object", tool.name);
        for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]) {
          assert.equal(typeof tool.annotations[hint], "boolean", `${tool.name} ${hint}`);
        }
      }
    });

    for (const tool of tools) {
      const scope = tool._meta["vestibule/scope"] as string;
      await t.step(`${tool.name} passes with ${scope}`, async () => {
        const { status, message } = await ws.call(everything, tool.name, {});
        assert.equal(status, 200, JSON.stringify(message));
        assert.ok(message.result, JSON.stringify(message));
      });
      if (scope === "app.access") continue;
      await t.step(`${tool.name} without ${scope} is a 403 step-up`, async () => {
        const { token } = await ws.token(["app.access", "members.read"].filter((s) => s !== scope));
        const { status, response, message } = await ws.call(token, tool.name, {});
        assert.equal(status, 403);
        const granted = scope === "members.read" ? "app.access" : "app.access members.read";
        assert.equal(
          response.headers.get("WWW-Authenticate"),
          `Bearer resource_metadata="${ws.server.apiUrl}/.well-known/oauth-protected-resource", scope="${granted} ${scope}", error="insufficient_scope"`,
        );
        assert.equal(JSON.parse(message).error, "insufficient_scope");
      });
    }

    await t.step("the step-up challenge never names offline_access", async () => {
      // MCP 2026-07-28 "Refresh Tokens": refresh is no requirement of the resource; a client
      // that wants it adds offline_access from the authorization server's metadata.
      const { token } = await ws.token(["openid", "offline_access", "app.access"]);
      const { status, response } = await ws.call(token, "list_members", {});
      assert.equal(status, 403);
      assert.match(
        response.headers.get("WWW-Authenticate")!,
        /, scope="openid app\.access members\.read", error="insufficient_scope"$/,
      );
    });

    await t.step(
      "a member holding an owner-only scope is refused without a challenge",
      async () => {
        const scope = [...OWNER_ONLY_SCOPES][0] as Scope;
        const tool = tools.find((t) => t._meta["vestibule/scope"] === scope)!;
        const { token } = await ws.token(["app.access", scope], { accountId: ws.memberId });
        const { status, response, message } = await ws.call(token, tool.name, {});
        assert.equal(status, 403);
        assert.equal(response.headers.get("WWW-Authenticate"), null);
        assert.equal(JSON.parse(message).error, "access_denied");
      },
    );
  } finally {
    await ws.close();
  }
});

Deno.test("workspace tools: the agent connection test", async (t) => {
  let now = Date.UTC(2026, 0, 1);
  const ws = await startWorkspaceServer({}, { now: () => now });
  try {
    const { token } = await ws.token(["app.access"], { clientId: "client-a" });
    const { token: otherClient } = await ws.token(["app.access"], { clientId: "client-b" });
    const setup = async (as = token, args = {}) => {
      const { message } = await ws.call(as, "get_agent_connection_setup", args);
      assert.equal(message.result.isError, undefined, JSON.stringify(message));
      return message.result.structuredContent;
    };
    const verify = async (attemptId: string, as = token) =>
      (await ws.call(as, "verify_agent_connection", { attemptId })).message.result;

    await t.step("setup returns nextAction, which verifies, and then says done", async () => {
      const first = await setup();
      assert.equal(first.status, "pending");
      assert.equal(first.businessName, "Acme Outdoor");
      assert.deepEqual(first.nextAction, {
        type: "call_tool",
        tool: "verify_agent_connection",
        arguments: { attemptId: first.attemptId },
      });
      const verified = await verify(first.nextAction.arguments.attemptId);
      assert.equal(verified.isError, undefined);
      assert.equal(verified.structuredContent.status, "verified");
      assert.deepEqual(verified.structuredContent.nextAction, { type: "done" });
      const again = await setup();
      assert.equal(again.status, "verified");
      assert.deepEqual(again.nextAction, { type: "done" });
    });

    await t.step("another client's attempt is refused", async () => {
      const mine = await setup(token, { restart: true });
      const result = await verify(mine.attemptId, otherClient);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /was started by this client for this business/);
    });

    await t.step("another business's attempt is refused", async () => {
      const { business } = await ws.accounts.createAccountWithBusiness(
        "owner@example.com",
        "Second business",
      );
      const { token: elsewhere } = await ws.token(["app.access"], {
        businessId: business.id,
        clientId: "client-a",
      });
      const mine = await setup(token, { restart: true });
      const result = await verify(mine.attemptId, elsewhere);
      assert.equal(result.isError, true);
    });

    await t.step("a superseded attempt is refused", async () => {
      const old = await setup(token, { restart: true });
      await setup(token, { restart: true });
      const result = await verify(old.attemptId);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /superseded/);
    });

    await t.step("an expired attempt is refused", async () => {
      const attempt = await setup(token, { restart: true });
      now += ATTEMPT_TTL_MS;
      const result = await verify(attempt.attemptId);
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /expired/);
    });

    await t.step("an unknown attempt is refused", async () => {
      const result = await verify("nope");
      assert.equal(result.isError, true);
    });
  } finally {
    await ws.close();
  }
});

Deno.test("workspace tools: reads and direct writes act on the store", async (t) => {
  const ws = await startWorkspaceServer();
  const b = ws.businessId;
  await ws.workspace.triggers.put(b, {
    id: "trg-1",
    name: "Refunds",
    event: "refund.requested",
    workflowId: "wf-1",
    enabled: true,
    updatedAt: 0,
  });
  await ws.workspace.packs.put(b, {
    id: "pack-1",
    name: "Apparel",
    vertical: "apparel",
    enabled: false,
    version: "1.0.0",
    latestVersion: "1.1.0",
    settings: { a: 1 },
    updatedAt: 0,
  });
  const { token } = await ws.token([
    "app.access",
    "business.name",
    "triggers.manage",
    "packs.manage",
    "members.read",
    "agent.sessions",
  ]);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200);
    assert.equal(message.result.isError, undefined, JSON.stringify(message.result));
    return message.result.structuredContent;
  };
  try {
    await t.step("rename_business changes only the name, and is audited", async () => {
      const out = await call("rename_business", { name: "  Acme Trail  " });
      assert.deepEqual(out, { businessId: b, name: "Acme Trail", previousName: "Acme Outdoor" });
      assert.equal((await ws.accounts.getBusiness(b))?.name, "Acme Trail");
    });

    await t.step(
      "a misspelt argument is an isError result naming it, not silently dropped",
      async () => {
        const { status, message } = await ws.call(token, "rename_business", { nmae: "Typo Ltd" });
        assert.equal(status, 200);
        assert.equal(message.result.isError, true);
        assert.match(message.result.content[0].text, /nmae/);
        assert.equal((await ws.accounts.getBusiness(b))?.name, "Acme Trail", "nothing changed");
      },
    );

    await t.step("disable_trigger and configure_pack write through, dated", async () => {
      const before = Date.now();
      const { trigger } = await call("disable_trigger", { triggerId: "trg-1" });
      assert.equal(trigger.enabled, false);
      assert.ok(trigger.updatedAt >= before, "when it was last written");
      const { pack } = await call("configure_pack", {
        packId: "pack-1",
        enabled: true,
        upgrade: true,
        settings: { b: "x" },
      });
      assert.deepEqual(
        [pack.enabled, pack.version, pack.settings],
        [true, "1.1.0", { a: 1, b: "x" }],
      );
      assert.ok(pack.updatedAt >= before);
    });

    await t.step("list_members shows members with roles", async () => {
      const { members } = await call("list_members");
      assert.deepEqual(members.map((m: RpcResult) => [m.email, m.role]), [
        ["member@example.com", "member"],
        ["owner@example.com", "owner"],
      ]);
    });

    await t.step("conversations are private to their account", async () => {
      const created = await call("create_conversation", { title: "Plans" });
      await call("add_conversation_message", {
        conversationId: created.id,
        role: "user",
        text: "hello",
      });
      assert.equal((await call("list_conversations")).conversations[0].messages.length, 1);
      const { token: member } = await ws.token(["app.access", "agent.sessions"], {
        accountId: ws.memberId,
      });
      const theirs = await ws.call(member, "list_conversations");
      assert.deepEqual(theirs.message.result.structuredContent.conversations, []);
      const intrusion = await ws.call(member, "add_conversation_message", {
        conversationId: created.id,
        role: "user",
        text: "hi",
      });
      assert.equal(intrusion.message.result.isError, true);
    });

    await t.step("every change is in the audit log with who, client and business", async () => {
      const entries = await createAuditLog(ws.server.store, Date.now).list(b);
      const actions = entries.map((e) => e.action);
      for (
        const name of [
          "rename_business",
          "disable_trigger",
          "configure_pack",
          "create_conversation",
          "add_conversation_message",
        ]
      ) {
        assert.ok(actions.includes(name), name);
      }
      const rename = entries.find((e) => e.action === "rename_business")!;
      assert.deepEqual([rename.accountId, rename.clientId, rename.businessId, rename.actor], [
        ws.ownerId,
        "test-client",
        b,
        "agent",
      ]);
    });
  } finally {
    await ws.close();
  }
});
