// deno-lint-ignore-file no-explicit-any -- log lines are arbitrary JSON the test picks apart
// A `gated` or `hidden` name the upstream does not list (misspelt in the file, or renamed
// upstream) fails closed, end to end: a real server in front of tiny upstreams serves none of
// that upstream's tools, never calls them, and logs the name with the listed tool it probably
// meant; the other upstreams are served as usual.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { listed, startGatewayServer, until } from "../support/gateway_support.ts";
import { adminEnv, sample, scrape } from "../support/metrics_helpers.ts";
import { connect, personBrowser, startPersonUpstream } from "../support/person_upstream_support.ts";

const tool = (name: string): TinyTool => ({
  definition: { name, description: `The ${name} tool.`, inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: name }] }),
});

/** The server's error lines about unlisted names, as [upstream, setting, tool, nearest]. */
const unlistedLines = (logs: readonly string[]) =>
  logs.map((line) => JSON.parse(line)).filter((event: any) =>
    event.level === "error" && event.setting !== undefined
  ).map((event: any) => [event.upstream, event.setting, event.tool, event.nearest]);

Deno.test("a gated or hidden name the upstream does not list holds its tools, and is logged with the tool it meant", async (t) => {
  const shop = startTinyUpstream({ tools: [tool("pay"), tool("refund")] });
  const vault = startTinyUpstream({ tools: [tool("secret_dump"), tool("count")] });
  const good = startTinyUpstream({ tools: [tool("add")] });
  // Calling `rename`'s echo makes it rename pay to pay_v2, and say its list changed.
  let renamed = false;
  const echo: TinyTool = {
    ...tool("echo"),
    handler() {
      renamed = true;
      rename.setTools([tool("pay_v2"), echo], { notify: true });
      return { content: [{ type: "text", text: "echo" }] };
    },
  };
  const rename = startTinyUpstream({ answer: "sse", tools: [tool("pay"), echo] });
  const ws = await startGatewayServer([
    { name: "shop", title: "Shop", url: shop.url, gated: ["payy"] },
    { name: "vault", title: "Vault", url: vault.url, hidden: ["secret_dumpp"] },
    { name: "good", title: "Good", url: good.url, gated: ["add"] },
    { name: "rename", title: "Rename", url: rename.url, gated: ["pay"] },
  ], adminEnv());
  // `listed` walks the pages again when the list changed meanwhile (the rename below).
  const names = async (token: string) =>
    [...(await listed(ws, token, "")).keys()].filter((name) => name.includes("__"));
  /** A call the endpoint refuses as a tool it does not serve; the upstream never hears of it. */
  const notServed = async (token: string, name: string) => {
    const { status, message } = await ws.call(token, name, {});
    assert.equal(status, 200);
    assert.equal(message.result, undefined, JSON.stringify(message));
    assert.match(message.error.message, new RegExp(name));
  };
  try {
    const { token } = await ws.token([
      "app.access",
      "upstream.shop",
      "upstream.vault",
      "upstream.good",
      "upstream.rename",
    ]);

    await t.step("only the upstreams whose every name is listed are served", async () => {
      assert.deepEqual(await names(token), ["good__add", "rename__pay", "rename__echo"]);
    });

    await t.step("a misspelt gated name: the tool it meant is never called ungated", async () => {
      await notServed(token, "shop__pay");
      await notServed(token, "shop__refund");
      assert.equal(shop.calls, 0);
    });

    await t.step("a misspelt hidden name: the tool it meant is not listed nor called", async () => {
      await notServed(token, "vault__secret_dump");
      await notServed(token, "vault__count");
      assert.equal(vault.calls, 0);
    });

    await t.step("each is logged once, at error level, with the listed tool nearest", () => {
      // The upstreams are listed side by side: their lines come in either order.
      assert.deepEqual(unlistedLines(ws.server.logs).sort(), [
        ["shop", "gated", "payy", "pay"],
        ["vault", "hidden", "secret_dumpp", "secret_dump"],
      ]);
    });

    await t.step("the operator listener says a held upstream is not up", async () => {
      const text = await scrape(ws.server.adminUrl);
      assert.equal(sample(text, 'vestibule_upstream_up{upstream="shop"}'), 0);
      assert.equal(sample(text, 'vestibule_upstream_up{upstream="vault"}'), 0);
      assert.equal(sample(text, 'vestibule_upstream_up{upstream="good"}'), 1);
    });

    await t.step("a gated tool renamed upstream holds that upstream's tools, logged", async () => {
      const { message } = await ws.call(token, "rename__echo", {});
      assert.equal(message.result.content[0].text, "echo");
      assert.ok(renamed);
      await until(
        "the renamed upstream's tools held",
        async () => !(await names(token)).some((name) => name.startsWith("rename__")),
      );
      const calls = rename.calls;
      await notServed(token, "rename__pay_v2");
      await notServed(token, "rename__echo");
      assert.equal(rename.calls, calls);
      assert.deepEqual(unlistedLines(ws.server.logs).at(-1), ["rename", "gated", "pay", "pay_v2"]);
      assert.deepEqual(await names(token), ["good__add"]);
    });
  } finally {
    await ws.close();
    await Promise.all([shop.close(), vault.close(), good.close(), rename.close()]);
  }
});

Deno.test("an upstream each person signs in to is held the same when its listing lacks a hidden name", async () => {
  const setup = await startPersonUpstream({ entry: { hidden: ["whoamii"] } });
  const { ws } = setup;
  try {
    const { token } = await ws.token(["app.access", "upstream.crm"]);
    const done = await connect(setup, await personBrowser(setup), "alice");
    assert.equal(done.status, 200, done.text);
    // Connecting lists the upstream with alice's token; the listing lacks the hidden name.
    await until("the unlisted name logged", () => unlistedLines(ws.server.logs).length > 0);
    assert.deepEqual(unlistedLines(ws.server.logs), [["crm", "hidden", "whoamii", "whoami"]]);
    assert.deepEqual((await ws.toolNames(token)).filter((n) => n.startsWith("crm__")), []);
    const { message } = await ws.call(token, "crm__whoami", {});
    assert.equal(message.result, undefined, JSON.stringify(message));
  } finally {
    await setup.close();
  }
});
