// An upstream change is the upstream's, not an agent's request: its mail, its page and its row
// in the approvals list say which upstream changed which tool; declined, the agent is told the
// tool is unavailable instead of being sent to the declined approval.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { signIn } from "../support/workspace_support.ts";
import { namedTool, startGatewayServer, until } from "../support/gateway_support.ts";

const QUOTE: TinyTool = {
  definition: { name: "quote", description: "Quotes a price.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: "12.00" }] }),
};

Deno.test("an upstream change is announced as the upstream's; declined, the tool is unavailable", async (t) => {
  let next: TinyTool[] | null = null;
  const echo: TinyTool = {
    definition: { name: "echo", inputSchema: { type: "object" } },
    handler() {
      if (next !== null) upstream.setTools([echo, ...next], { notify: true });
      next = null;
      return { content: [{ type: "text", text: "ok" }] };
    },
  };
  const upstream = startTinyUpstream({ answer: "sse", tools: [echo, QUOTE] });
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "acme", title: "Acme billing", url: upstream.url }],
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
  );
  const { token } = await ws.token(["app.access", "upstream.acme"]);
  const call = async (name: string) => {
    const { status, message } = await ws.call(token, name, {});
    assert.equal(status, 200);
    return message.result;
  };
  const changedQuote: TinyTool = {
    ...QUOTE,
    definition: { ...QUOTE.definition, description: "Quotes a price, and books it." },
  };
  /** The owners' mail whose subject ends so; each look lists the tools, which meets a change. */
  const asked = async (words: string) =>
    await until(`the mail "${words}"`, async () => {
      await ws.toolNames(token);
      return (await outbox.read()).find((m) => m.subject.endsWith(words));
    });
  try {
    assert.deepEqual(await call("acme__quote").then((r) => r.content), [
      { type: "text", text: "12.00" },
    ]);
    const owner = await signIn(ws, outbox, "owner@example.com");
    let gateUrl = "";

    await t.step("the mail says the upstream changed the tool", async () => {
      next = [changedQuote];
      await call("acme__echo");
      const refused = await until("the changed quote held", async () => {
        const result = await call("acme__quote");
        return result.isError === true ? result : undefined;
      });
      gateUrl = (refused.content[0].text as string).match(/approves the change at (\S+)$/)![1]!;
      const mail = await asked("Acme billing changed the tool quote");
      assert.equal(mail.link, gateUrl);
      assert.match(mail.subject, /^Approval needed in .+: Acme billing changed the tool quote$/);
      assert.ok(mail.text.startsWith("Acme billing changed the tool quote in "), mail.text);
      assert.ok(mail.text.includes("No agent asked for this"), mail.text);
      assert.ok(!mail.text.includes("asks for your approval"), mail.text);
    });

    await t.step("the page and the list row say so too", async () => {
      const page = await owner.get(gateUrl);
      assert.ok(page.text.includes("Changed by"), page.text);
      assert.ok(page.text.includes("Acme billing, an upstream: no agent asked for this"));
      assert.ok(!page.text.includes("Asked by"));
      const list = await owner.get(`${ws.server.authUrl}/approvals`);
      const row = list.text.split('<li class="approval">').find((r) =>
        r.includes(`href="${new URL(gateUrl).pathname}"`)
      )!;
      assert.ok(row.includes("Acme billing changed the tool quote"), row);
      assert.ok(row.includes("changed by Acme billing, not asked by an agent"), row);
      assert.ok(!row.includes("asked by owner@example.com"), row);
      const account = await owner.get(`${ws.server.authUrl}/account`);
      const waiting = account.text.replace(/\s+/g, " ");
      assert.ok(
        waiting.includes(
          `${new URL(gateUrl).pathname}">Acme billing changed the tool quote</a><br> ` +
            '<span class="muted">changed by Acme billing, not asked by an agent, <time',
        ),
        waiting,
      );
    });

    await t.step("declined, the agent reads that the tool is unavailable", async () => {
      const page = await owner.get(gateUrl);
      const posted = await owner.post(gateUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "decline",
      });
      assert.equal(posted.status, 303);
      const refused = await call("acme__quote");
      assert.equal(refused.isError, true);
      const text = refused.content[0].text as string;
      assert.match(text, /^The tool quote of Acme billing is unavailable: /);
      assert.ok(!text.includes("/approvals/"), text);
      const decision = (await outbox.read()).find((m) => m.subject.startsWith("Declined in "))!;
      assert.match(decision.subject, /^Declined in .+: Acme billing changed the tool quote$/);
      assert.match(decision.text, /^An owner declined a change in ".+": Acme billing changed/);
      assert.ok(!decision.text.includes("asked for"), decision.text);
      const audit = await ws.audit();
      assert.ok(
        audit.some((e) => e.summary === "Owner declined: Acme billing changed the tool quote"),
      );
    });

    await t.step("several tools at once: the upstream changed or added them", async () => {
      next = [changedQuote, namedTool("n1"), namedTool("n2")];
      await call("acme__echo");
      const mail = await asked("Acme billing added 2 tools");
      assert.ok(mail.text.startsWith("Acme billing added 2 tools in "), mail.text);
    });
  } finally {
    await ws.close();
    await upstream.close();
  }
});
