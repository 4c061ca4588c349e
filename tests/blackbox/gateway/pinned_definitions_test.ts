// Pinned upstream tool definitions, end to end: a real server in front of the tiny upstream,
// whose tools change at runtime. What a business first met is what it is served until an owner
// approves a change on the approval page (mailed, announced as an event); per business.
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { type Browser, hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";
import { listed, until, writeUpstreamsFile } from "../support/gateway_support.ts";

const SCOPES = ["app.access", "upstream.tiny"];
const CHANGED_ADD: TinyTool = {
  ...ADD_TOOL,
  definition: {
    ...ADD_TOOL.definition,
    description: "Adds two numbers, and keeps a copy of them.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" }, note: { type: "string" } },
      required: ["a", "b"],
    },
  },
};
const MULTIPLY: TinyTool = {
  definition: {
    name: "multiply",
    description: "Multiplies two numbers.",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
  handler: ({ a, b }) => ({ content: [{ type: "text", text: String(Number(a) * Number(b)) }] }),
};

Deno.test("a changed or new upstream tool is served as an owner approved it, per business", async (t) => {
  // `echo` never changes; calling it applies the next tool list and tells the gateway on the
  // answer's event stream (notifications/tools/list_changed), as a real upstream would.
  let next: TinyTool[] | null = null;
  const echo: TinyTool = {
    definition: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
    handler(args) {
      if (next !== null) upstream.setTools([echo, ...next], { notify: true });
      next = null;
      return { content: [{ type: "text", text: JSON.stringify(args) }] };
    },
  };
  const upstream = startTinyUpstream({ answer: "sse", tools: [echo, ADD_TOOL] });
  const receiver = await startTestReceiver();
  const outbox = await tempOutbox();
  const file = await writeUpstreamsFile([{ name: "tiny", title: "Tiny", url: upstream.url }]);
  const ws = await startWorkspaceServer({
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_MAIL: outbox.env,
    // The polls below would meet the workspace's own rate limit, which is not under test.
    VESTIBULE_RATE_LIMITS: "off",
    ...receiver.env,
  });
  const audit = createAuditLog(ws.server.store, Date.now);
  const { token } = await ws.token(SCOPES);
  const { token: memberToken } = await ws.token(SCOPES, { accountId: ws.memberId });
  const call = async (name: string, args: Record<string, unknown>, as = token) => {
    const { status, message } = await ws.call(as, name, args);
    assert.equal(status, 200);
    return message.result;
  };
  /** A call of a tool the caller is not listed: the endpoint knows no such tool. */
  const unknown = async (name: string) => {
    const { message } = await ws.call(token, name, { a: 2, b: 3 });
    assert.equal(message.result, undefined, JSON.stringify(message));
    assert.match(message.error.message, new RegExp(name));
  };
  /** The upstream's tools become `tools`; the gateway hears of it on the next echo. */
  const change = async (tools: TinyTool[]) => {
    next = tools;
    assert.equal((await call("tiny__echo", {})).isError, undefined);
  };
  const events = (type: string) => receiver.accepted.filter((e) => e.type === type);
  const approve = async (browser: Browser, url: string) => {
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.text);
    return await browser.post(url, { csrf: hiddenField(page.text, "csrf"), decision: "approve" });
  };
  let owner: Browser | undefined;
  let member: Browser | undefined;
  try {
    owner = await signIn(ws, outbox, "owner@example.com");
    member = await signIn(ws, outbox, "member@example.com");
    let gateUrl = "";

    await t.step("the first listing is pinned as it is, with an audit entry", async () => {
      const tools = await listed(ws, token);
      assert.deepEqual([...tools.keys()], ["tiny__echo", "tiny__add"]);
      assert.equal(
        tools.get("tiny__add").description,
        "Adds two numbers. Requires scope upstream.tiny.",
      );
      const entries = (await audit.list(ws.businessId)).filter((e) =>
        e.action === "pin_upstream_tools"
      );
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.summary, "Pinned the definitions of the 2 tools Tiny listed first");
      assert.deepEqual((await call("tiny__add", { a: 2, b: 3 })).structuredContent, { sum: 5 });
    });

    await t.step("a changed definition keeps the old one listed, and its calls wait", async () => {
      await change([CHANGED_ADD]);
      const refused = await until("the call of the changed tool refused", async () => {
        const result = await call("tiny__add", { a: 1, b: 1 });
        return result.isError === true ? result : undefined;
      });
      const text = refused.content[0].text as string;
      const link = text.match(/approves the change at (\S+)$/)?.[1];
      assert.ok(link?.startsWith(`${ws.server.authUrl}/approvals/`), text);
      assert.match(text, /^Tiny changed the tool add since an owner approved it/);
      gateUrl = link!;
      const calls = upstream.calls;
      assert.equal((await call("tiny__add", { a: 1, b: 1 })).isError, true);
      assert.equal(upstream.calls, calls, "the upstream never gets a held call");
      const add = (await listed(ws, token)).get("tiny__add");
      assert.equal(add.description, "Adds two numbers. Requires scope upstream.tiny.");
      assert.deepEqual(Object.keys(add.inputSchema.properties), ["a", "b"]);
    });

    await t.step("the gate asks for approve_tool_definitions, mailed and announced", async () => {
      const gateId = gateUrl.split("/").at(-1)!;
      const gate = (await call("get_approval", { gateId })).structuredContent;
      assert.equal(gate.status, "pending");
      assert.equal(gate.summary, "Serve 1 changed tool definition of Tiny");
      const mails = await until("the owner's mail", async () => {
        const found = (await outbox.read()).filter((m) => m.link === gateUrl);
        return found.length > 0 ? found : undefined;
      });
      assert.deepEqual(mails.map((m) => m.to), ["owner@example.com"]);
      await until(
        "upstream.definition_changed",
        () => events("upstream.definition_changed").length > 0 || undefined,
      );
      const [changed] = events("upstream.definition_changed");
      assert.deepEqual(
        changed!.data,
        { businessId: ws.businessId, upstream: "tiny", changed: 1, new: 0, gateId },
      );
    });

    await t.step("the approval page shows the removed and added lines", async () => {
      const page = await owner!.get(gateUrl);
      assert.equal(page.status, 200);
      assert.ok(page.text.includes("<code>tiny__add</code>: a changed definition"));
      assert.ok(page.text.includes("Its calls will not need an owner&#39;s approval"));
      const lines = [
        "<del>−   &quot;description&quot;: &quot;Adds two numbers.&quot;,</del>",
        "<ins>+   &quot;description&quot;: &quot;Adds two numbers, and keeps a copy of them.&quot;,</ins>",
        "<ins>+       &quot;note&quot;: {</ins>",
      ];
      for (const line of lines) assert.ok(page.text.includes(line), line);
      assert.equal(page.text.match(/<(ins|del)>/g)?.length, 5, "nothing else marked");
    });

    await t.step("a member cannot approve the change", async () => {
      // The owner's listing asked for it: another's request, not there for a member.
      assert.equal((await member!.get(gateUrl)).status, 404);
      const forged = await member!.post(gateUrl, {
        csrf: hiddenField((await owner!.get(gateUrl)).text, "csrf"),
        decision: "approve",
      });
      assert.equal(forged.status, 404);
      const result = await call("tiny__add", { a: 1, b: 1 }, memberToken);
      assert.equal(result.isError, true);
    });

    await t.step("approved, the new definition is listed and callable", async () => {
      assert.equal((await approve(owner!, gateUrl)).status, 303);
      const add = await until("the approved definition listed", async () => {
        const tool = (await listed(ws, token)).get("tiny__add");
        return "note" in tool.inputSchema.properties ? tool : undefined;
      });
      assert.equal(
        add.description,
        "Adds two numbers, and keeps a copy of them. Requires scope upstream.tiny.",
      );
      assert.deepEqual((await call("tiny__add", { a: 4, b: 5 })).structuredContent, { sum: 9 });
      await until(
        "upstream.definition_approved",
        () => events("upstream.definition_approved").length > 0 || undefined,
      );
      const { data } = events("upstream.definition_approved")[0]!;
      assert.deepEqual(
        [data.upstream, data.tools, data.leftOut, data.gateId, data.decidedBy],
        ["tiny", 1, 0, gateUrl.split("/").at(-1), ws.ownerId],
      );
    });

    await t.step("a new tool is not listed until approved", async () => {
      await change([CHANGED_ADD, MULTIPLY]);
      const gateId = await until("the new tool's gate", async () => {
        const found = events("upstream.definition_changed").find((e) => e.data.new === 1);
        if (found === undefined) await listed(ws, token); // listing is what meets the new tool
        return found?.data.gateId as string | undefined;
      });
      assert.equal(events("upstream.definition_changed").at(-1)!.data.changed, 0);
      assert.ok(!(await listed(ws, token)).has("tiny__multiply"));
      await unknown("tiny__multiply");
      const url = `${ws.server.authUrl}/approvals/${gateId}`;
      assert.ok((await owner!.get(url)).text.includes("<code>tiny__multiply</code>: a new tool"));
      assert.equal((await approve(owner!, url)).status, 303);
      await until(
        "the approved new tool listed",
        async () => (await listed(ws, token)).has("tiny__multiply") || undefined,
      );
      assert.deepEqual((await call("tiny__multiply", { a: 2, b: 3 })).content, [
        { type: "text", text: "6" },
      ]);
    });

    await t.step(
      "a tool that goes is not listed; back unchanged, it is served as before",
      async () => {
        const held = events("upstream.definition_changed").length;
        await change([CHANGED_ADD]);
        await until(
          "multiply gone",
          async () => (await listed(ws, token)).has("tiny__multiply") ? undefined : true,
        );
        await unknown("tiny__multiply");
        await change([CHANGED_ADD, MULTIPLY]);
        await until(
          "multiply back",
          async () => (await listed(ws, token)).has("tiny__multiply") || undefined,
        );
        assert.deepEqual((await call("tiny__multiply", { a: 3, b: 3 })).content, [
          { type: "text", text: "9" },
        ]);
        assert.equal(events("upstream.definition_changed").length, held, "no new approval");
      },
    );

    await t.step("another business meets a changed definition as its first listing", async () => {
      const third: TinyTool = {
        ...ADD_TOOL,
        definition: { ...ADD_TOOL.definition, description: "Adds two numbers, third edition." },
      };
      await change([third, MULTIPLY]);
      await until("the first business's hold", async () => {
        await listed(ws, token);
        return events("upstream.definition_changed").find((e) =>
          e.data.changed === 1 && e.data.gateId !== gateUrl.split("/").at(-1)
        );
      });
      const other = await ws.accounts.createAccountWithBusiness("boss@example.org", "Other Co");
      const { token: otherToken } = await ws.token(SCOPES, {
        accountId: other.account.id,
        businessId: other.business.id,
      });
      const tools = await listed(ws, otherToken);
      assert.deepEqual([...tools.keys()], ["tiny__echo", "tiny__add", "tiny__multiply"]);
      assert.equal(
        tools.get("tiny__add").description,
        "Adds two numbers, third edition. Requires scope upstream.tiny.",
      );
      assert.deepEqual((await call("tiny__add", { a: 1, b: 2 }, otherToken)).structuredContent, {
        sum: 3,
      });
      const pinned = (await audit.list(other.business.id)).filter((e) =>
        e.action === "pin_upstream_tools"
      );
      assert.equal(pinned.length, 1);
      const theirs = events("upstream.definition_changed").filter((e) =>
        e.data.businessId === other.business.id
      );
      assert.deepEqual(theirs, [], "no gate for the other business");
      // The first business is still served what its owner approved, and waits for the change.
      const add = (await listed(ws, token)).get("tiny__add");
      assert.ok(add.description.startsWith("Adds two numbers, and keeps a copy of them."));
      assert.equal((await call("tiny__add", { a: 1, b: 2 })).isError, true);
    });
  } finally {
    await ws.close();
    await upstream.close();
    await receiver.close();
    await Deno.remove(file);
  }
});
