// One upstream change, one approval: an upstream that changes a tool and adds 150 at once asks
// each owner once, on a page that lists every tool with its definition (and whether its calls
// will need an approval); the owner approves all of them, or leaves some out.
import assert from "node:assert/strict";
import { canonicalSha256 } from "../../../src/canonical_json.ts";
import { createUpstreamPins } from "../../../src/workspace/domain/upstream_pins.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { signIn } from "../support/workspace_support.ts";
import { namedTool, startGatewayServer, until } from "../support/gateway_support.ts";

const ADDED = 150;

Deno.test("an upstream change of 151 tools is one approval per owner, approved whole or in part", async (t) => {
  let next: TinyTool[] | null = null;
  const echo: TinyTool = {
    definition: { name: "echo", inputSchema: { type: "object" } },
    handler() {
      if (next !== null) upstream.setTools([echo, ...next], { notify: true });
      next = null;
      return { content: [{ type: "text", text: "ok" }] };
    },
  };
  const upstream = startTinyUpstream({ answer: "sse", tools: [echo, ADD_TOOL] });
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "tiny", title: "Tiny", url: upstream.url, gated: ["add"] }],
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
  );
  await ws.accounts.addMember(ws.businessId, "second@example.com", "owner");
  const { token } = await ws.token(["app.access", "upstream.tiny"]);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200);
    return message;
  };
  const changedAdd: TinyTool = {
    ...ADD_TOOL,
    definition: { ...ADD_TOOL.definition, description: "Adds two numbers, and keeps them." },
  };
  try {
    assert.deepEqual(await ws.toolNames(token).then((n) => n.filter((x) => x.includes("__"))), [
      "tiny__echo",
      "tiny__add",
    ]);
    let gateUrl = "";

    await t.step("the change is one gate, and each owner is mailed once", async () => {
      next = [changedAdd, ...Array.from({ length: ADDED }, (_, i) => namedTool(`n${i}`))];
      await call("tiny__echo");
      // Listing the tools builds the business's view, which holds the change (add is gated: a
      // call of it would ask for an approval of its own).
      const mailed = await until("the change held", async () => {
        await ws.toolNames(token);
        return (await outbox.read()).find((m) => m.subject.startsWith("Approval needed"));
      });
      gateUrl = mailed.link;
      const { result: refused } = await call("tiny__add", { a: 1, b: 2 });
      assert.equal(refused.isError, true);
      assert.match(refused.content[0].text, /approves the change at (\S+)$/);
      assert.ok((refused.content[0].text as string).endsWith(gateUrl));
      const asked = (await outbox.read()).filter((m) => m.subject.startsWith("Approval needed"));
      assert.deepEqual(asked.map((m) => [m.to, m.link]).sort(), [
        ["owner@example.com", gateUrl],
        ["second@example.com", gateUrl],
      ]);
      const gate = (await call("get_approval", { gateId: gateUrl.split("/").at(-1) })).result
        .structuredContent;
      assert.equal(gate.summary, "Serve 1 changed tool definition and 150 new tools of Tiny");
      assert.ok(!(await ws.toolNames(token)).includes("tiny__n0"), "new tools wait");
    });

    await t.step("the page lists every tool with its definition and its gating", async () => {
      const owner = await signIn(ws, outbox, "owner@example.com");
      const page = await owner.get(gateUrl);
      assert.equal(page.status, 200);
      const sections = page.text.split('<section class="batch-tool">').slice(1);
      assert.equal(sections.length, ADDED + 1);
      const of = (tool: string) => sections.find((s) => s.includes(`<code>tiny__${tool}</code>`))!;
      assert.ok(of("add").includes(": a changed definition"));
      assert.ok(
        of("add").includes(
          "<ins>+   &quot;description&quot;: &quot;Adds two numbers, and keeps them.&quot;,</ins>",
        ),
      );
      assert.ok(of("n8").includes(": a new tool"));
      assert.ok(of("n8").includes("<ins>+   &quot;description&quot;: &quot;Tool n8.&quot;,</ins>"));
      assert.ok(of("n8").includes("Its calls will not need an owner&#39;s approval"));
      assert.ok(of("add").includes("Each call of it will need an owner&#39;s approval"));

      const form = new URLSearchParams({
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      form.append("leave_out", "n0");
      form.append("leave_out", "n7");
      assert.equal((await owner.post(gateUrl, form)).status, 303);
      const decided = await owner.get(`${gateUrl}?decided`);
      assert.ok(
        decided.text.includes("Serve 149 tools of Tiny as it lists them now; 2 left out stay held"),
      );
    });

    await t.step("the approved tools are served; those left out stay held", async () => {
      const names = await until("the approved tools listed", async () => {
        const names = await ws.toolNames(token).catch((): string[] => []);
        return names.includes("tiny__n149") ? names : undefined;
      });
      assert.ok(!names.includes("tiny__n0") && !names.includes("tiny__n7"));
      assert.deepEqual((await call("tiny__n1")).result.content, [{ type: "text", text: "n1" }]);
      const add = await call("tiny__add", { a: 1, b: 2 });
      assert.equal(add.result.structuredContent.status, "pending", "the changed add, gated");
      const asked = (await outbox.read()).filter((m) => m.subject.startsWith("Approval needed"));
      assert.equal(asked.length, 2 + 2, "and the gated call's approval, once per owner");
    });
  } finally {
    await ws.close();
    await upstream.close();
  }
});

Deno.test("a first listing a process stopped half-way is finished as a first listing, not held", async () => {
  const tools = Array.from({ length: 300 }, (_, i) => namedTool(`n${i}`));
  const upstream = startTinyUpstream({ tools });
  const ws = await startGatewayServer([{ name: "tiny", title: "Tiny", url: upstream.url }]);
  try {
    // What a process wrote before it stopped: the mark, and the first 100 pins.
    const pins = createUpstreamPins(ws.server.store);
    await ws.server.store.set(pins.firstKey(ws.businessId, "tiny"), { done: false, startedAt: 1 });
    await ws.server.store.commit(
      [],
      tools.slice(0, 100).map((tool) =>
        pins.pin(ws.businessId, "tiny", {
          definition: tool.definition,
          hash: canonicalSha256(tool.definition),
          pinnedAt: 1,
          approvedBy: null,
        })
      ),
    );
    const { token } = await ws.token(["app.access", "upstream.tiny"]);
    const names = (await ws.toolNames(token)).filter((name) => name.startsWith("tiny__"));
    assert.equal(names.length, 300);
    assert.deepEqual(
      await ws.server.store.get(pins.firstKey(ws.businessId, "tiny")).then((e) => e?.value),
      {
        done: true,
        startedAt: 1,
      },
    );
    const audit = (await ws.audit()).filter((e) => e.action !== "pin_upstream_tools");
    assert.deepEqual(audit, [], "no approval asked");
  } finally {
    await ws.close();
    await upstream.close();
  }
});
