// An upstream at the gateway's bounds, on Deno KV and on PostgreSQL: 10,000 tools (the most a
// listing takes), a name no key can hold, a definition no value can hold, and a 40 KB definition
// that changes while 150 tools appear. No request that does not call those tools fails: the first
// listing is pinned in commits every store takes, what no store can hold is left out and logged,
// and the change is one approval, mailed once, whose definitions live outside the gate.
import assert from "node:assert/strict";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { toolsList } from "../../mcp/wire.ts";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { signIn } from "../support/workspace_support.ts";
import { namedTool, startGatewayServer, until } from "../support/gateway_support.ts";

const TOOLS = 10_000;
const ADDED = 150;
const LONG_NAME = "n".repeat(2_048);

/** A description of about 40 KB: two of them, a gate's old and new definition, pass 64 KiB. */
const _essay = (word: string) => `${word} `.repeat(Math.floor(40_000 / (word.length + 1)));

/**
 * 10,000 tools: the unstorable two, the 40 KB one, `t3` … Changed, the essay is rewritten and
 * the last 150 tools give way to 150 new ones.
 */
function _listing(changed: boolean, trigger: TinyTool): TinyTool[] {
  const tools = [
    trigger,
    namedTool(LONG_NAME),
    namedTool("huge", "h".repeat(70_000)),
    namedTool("essay", _essay(changed ? "after" : "before")),
  ];
  for (let i = tools.length; i < TOOLS; i++) {
    tools.push(namedTool(changed && i >= TOOLS - ADDED ? `added${i}` : `t${i}`));
  }
  return tools;
}

async function _exercise(t: Deno.TestContext, label: string, dataUrl?: string) {
  let changeNext = false;
  const trigger: TinyTool = {
    definition: { name: "change", inputSchema: { type: "object" } },
    handler() {
      if (changeNext) upstream.setTools(_listing(true, trigger), { notify: true });
      changeNext = false;
      return { content: [{ type: "text", text: "ok" }] };
    },
  };
  const upstream = startTinyUpstream({
    answer: "sse",
    pageSize: 100,
    tools: _listing(false, trigger),
  });
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "tiny", title: "Tiny", url: upstream.url }],
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
    dataUrl === undefined ? {} : { dataUrl },
  );
  const { token } = await ws.token(["app.access", "upstream.tiny"]);
  const call = async (name: string) => {
    const { status, message } = await ws.call(token, name, {});
    assert.equal(status, 200, JSON.stringify(message));
    return message.result;
  };
  try {
    let gateUrl = "";
    await t.step(
      "the first listing is pinned and served; what no store holds is left out",
      async () => {
        // Measured, not asserted: what the report of this change quotes.
        const timed = async <T>(run: () => Promise<T>) => {
          const at = performance.now();
          return { value: await run(), ms: (performance.now() - at).toFixed(0) };
        };
        const first = await timed(() => ws.post(token, toolsList(undefined)));
        assert.equal(first.value.status, 200);
        assert.ok((await first.value.json()).result.tools.length > 0);
        const again = await timed(() => ws.post(token, toolsList(undefined)));
        assert.equal(again.value.status, 200);
        await again.value.body?.cancel();
        const all = await timed(() => ws.toolNames(token));
        const names = all.value;
        console.log(
          `[${label}] ${TOOLS} upstream tools: the first tools/list page (pinning them) ${first.ms} ms, ` +
            `the next ${again.ms} ms; every page in turn ${all.ms} ms`,
        );
        const upstreamTools = names.filter((name) => name.startsWith("tiny__"));
        assert.equal(upstreamTools.length, TOOLS - 2);
        assert.ok(names.includes("list_workflows"), "Vestibule's own tools are listed");
        assert.ok(!names.includes("tiny__huge"));
        const logged = (tool: string) =>
          ws.server.logs.some((line) =>
            line.includes("no store can hold: left out") && line.includes(`"tool":"${tool}`)
          );
        assert.ok(logged("huge"), ws.server.logs.join("\n").slice(-3000));
        assert.ok(logged(LONG_NAME.slice(0, 200)));
        const entries = (await ws.audit()).filter((e) => e.action === "pin_upstream_tools");
        assert.deepEqual(entries.map((e) => e.summary), [
          `Pinned the definitions of the ${
            TOOLS - 2
          } tools Tiny listed first; left out 2 no store can hold`,
        ]);
        assert.deepEqual((await call("tiny__t9")).content, [{ type: "text", text: "t9" }]);
      },
    );

    await t.step(
      "a 40 KB definition changed and 150 new tools: one approval, mailed once",
      async () => {
        changeNext = true;
        await call("tiny__change");
        const refused = await until("the changed essay held", async () => {
          const result = await call("tiny__essay");
          return result.isError === true ? result : undefined;
        }, 60_000);
        gateUrl = (refused.content[0].text as string).match(/approves the change at (\S+)$/)![1]!;
        const names = await ws.toolNames(token);
        assert.equal(names.filter((name) => name.startsWith("tiny__")).length, TOOLS - 2 - ADDED);
        assert.ok(names.includes("tiny__essay") && !names.includes(`tiny__added${TOOLS - 1}`));
        const asked = (await outbox.read()).filter((mail) =>
          mail.subject.startsWith("Approval needed")
        );
        assert.deepEqual(asked.map((mail) => [mail.to, mail.link]), [[
          "owner@example.com",
          gateUrl,
        ]]);
        // The upstream's change, not an agent's request; the body says what approving does.
        assert.match(asked[0]!.subject, /: Tiny changed or added 151 tools$/);
        assert.match(
          asked[0]!.text,
          /Approving would: Serve 1 changed tool definition and 150 new tools of Tiny\./,
        );
      },
    );

    await t.step("the owner approves all but two; those stay held", async () => {
      const owner = await signIn(ws, outbox, "owner@example.com");
      const page = await owner.get(gateUrl);
      assert.equal(page.status, 200);
      assert.equal(page.text.match(/<section class="batch-tool">/g)?.length, ADDED + 1);
      assert.ok(page.text.includes("<code>tiny__essay</code>: a changed definition"));
      const last = page.text.indexOf(`<code>tiny__added${TOOLS - 1}</code>: a new tool`);
      assert.ok(last > 0);
      assert.ok(
        page.text.slice(last).includes("Its calls will not need an owner&#39;s approval"),
      );
      const left = [`added${TOOLS - ADDED}`, `added${TOOLS - ADDED + 1}`];
      const form = new URLSearchParams({
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      for (const tool of left) form.append("leave_out", tool);
      assert.equal((await owner.post(gateUrl, form)).status, 303);
      const names = await until("the approved tools served", async () => {
        // A cursor of a list that changed since is refused: the walk starts again.
        const names = await ws.toolNames(token).catch((): string[] => []);
        return names.includes(`tiny__added${TOOLS - 1}`) ? names : undefined;
      }, 60_000);
      assert.equal(names.filter((name) => name.startsWith("tiny__")).length, TOOLS - 2 - 2);
      for (const tool of left) assert.ok(!names.includes(`tiny__${tool}`), tool);
      assert.deepEqual((await call("tiny__essay")).content, [{ type: "text", text: "essay" }]);
      const decided = await owner.get(gateUrl);
      assert.equal(decided.text.match(/<section class="batch-tool">/g)?.length, 2);
    });
  } finally {
    await ws.close();
    await upstream.close();
  }
}

Deno.test("10,000 upstream tools and definitions no store holds never fail a request: Deno KV", async (t) => {
  await _exercise(t, "Deno KV");
});

Deno.test("10,000 upstream tools and definitions no store holds never fail a request: PostgreSQL", async (t) => {
  const cluster = await startPgCluster();
  try {
    await _exercise(t, "PostgreSQL", await cluster.database());
  } finally {
    await cluster.stop();
  }
});

Deno.test("a business's view of one upstream that cannot be stored costs only that upstream", async () => {
  const broken = startTinyUpstream({ tools: [namedTool("a")] });
  const working = startTinyUpstream({ tools: [namedTool("b")] });
  const ws = await startGatewayServer(
    [{ name: "broken", url: broken.url }, { name: "working", url: working.url }],
    {},
    {
      // The store refuses every write of the first upstream's pins, as a failing disk would.
      storeFault: {
        operations: ["commit"],
        key: ["ws", "", "upstream_", "broken"],
        error: { name: "Error", message: "the disk refused the write" },
      },
    },
  );
  try {
    const { token } = await ws.token(["app.access", "upstream.broken", "upstream.working"]);
    const names = await ws.toolNames(token);
    assert.ok(names.includes("list_workflows") && names.includes("working__b"), names.join());
    assert.ok(!names.includes("broken__a"));
    assert.equal((await ws.call(token, "working__b", {})).status, 200);
    assert.ok(
      ws.server.logs.some((line) =>
        line.includes("could not be read or pinned") && line.includes('"upstream":"broken"') &&
        line.includes("the disk refused the write")
      ),
      ws.server.logs.join("\n"),
    );
  } finally {
    await ws.close();
    await broken.close();
    await working.close();
  }
});
