// Who is served which upstream tools, black-box: an owner-only upstream is left out for members,
// an upstream for one business is left out for another, a tool mapped to its own scope needs it,
// hidden tools are nowhere, each upstream has its own rate limit; and the operator listener
// counts calls per upstream and says which upstreams answer.
import assert from "node:assert/strict";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { ADD_TOOL, type TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { listed, writeUpstreamsFile } from "../support/gateway_support.ts";
import {
  adminEnv,
  assertPromtoolAccepts,
  PROMTOOL,
  sample,
  scrape,
} from "../support/metrics_helpers.ts";
import { modernRequest } from "../support/mcp_helpers.ts";
import { startWorkspaceServer } from "../support/workspace_support.ts";
import { openStoreFile, storeFile } from "../support/server_runtime.ts";

const tool = (name: string): TinyTool => ({
  definition: { name, description: `The ${name} tool.`, inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: name }] }),
});

Deno.test("upstream tools are served by role, business, scope and rate, and counted", async (t) => {
  const tiny = startTinyUpstream({ tools: [ADD_TOOL, tool("echo"), tool("secret")] });
  const vault = startTinyUpstream({ tools: [tool("open")] });
  const local = startTinyUpstream({ tools: [tool("stock")] });
  // Another business, made in the store file before the server starts so that the file can
  // name it; the server opens the file itself (on Node.js too).
  const dir = await Deno.makeTempDir();
  const dataUrl = storeFile(`${dir}/store`);
  const seeding = await openStoreFile(dataUrl);
  const elsewhere = await createAccounts(seeding, Date.now).createAccountWithBusiness(
    "boss@example.org",
    "Elsewhere",
  );
  await seeding.close();
  const file = await writeUpstreamsFile([
    {
      name: "tiny",
      title: "Tiny",
      url: tiny.url,
      hidden: ["secret"],
      scopes: { add: "upstream.tiny.write" },
      rateLimit: { perMinute: 1, burst: 2 },
    },
    { name: "vault", title: "Vault", url: vault.url, ownerOnly: true },
    { name: "local", title: "Local", url: local.url, businesses: [elsewhere.business.id] },
    { name: "dead", title: "Dead", url: "http://127.0.0.1:1/mcp" },
  ]);
  const admin = adminEnv();
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file, ...admin }, { dataUrl });
  const ALL = ["app.access", "upstream.tiny", "upstream.tiny.write", "upstream.vault"];
  const names = async (token: string) =>
    [...(await listed(ws, token, "")).keys()].filter((name) => name.includes("__"));
  const call = async (token: string, name: string, args: Record<string, unknown> = {}) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200);
    return message;
  };
  try {
    const { token: owner } = await ws.token(ALL);
    const { token: member } = await ws.token(ALL, { accountId: ws.memberId });

    await t.step("an owner-only upstream's tools are listed to owners only", async () => {
      assert.deepEqual(await names(owner), ["tiny__add", "tiny__echo", "vault__open"]);
      assert.deepEqual(await names(member), ["tiny__add", "tiny__echo"]);
      assert.equal((await call(owner, "vault__open")).result.content[0].text, "open");
      const refused = await call(member, "vault__open");
      assert.match(refused.error.message, /vault__open/);
      assert.equal(vault.calls, 1);
    });

    await t.step(
      "a list with upstream tools is private and fresh for 60 s (2026-07-28)",
      async () => {
        const { body, headers } = modernRequest("tools/list");
        const listing = await (await ws.post(owner, body, headers)).json();
        assert.equal(listing.result.cacheScope, "private");
        assert.equal(listing.result.ttlMs, 60_000);
      },
    );

    await t.step("an upstream for one business is not listed to another", async () => {
      const { token: theirs } = await ws.token(["app.access", "upstream.tiny", "upstream.local"], {
        accountId: elsewhere.account.id,
        businessId: elsewhere.business.id,
      });
      // Its boss is an owner there: the owner-only vault is listed too (its scope a step-up away).
      assert.deepEqual(await names(theirs), [
        "tiny__add",
        "tiny__echo",
        "vault__open",
        "local__stock",
      ]);
      assert.equal((await call(theirs, "local__stock")).result.content[0].text, "stock");
      assert.ok(!(await names(owner)).includes("local__stock"));
      assert.match((await call(owner, "local__stock")).error.message, /local__stock/);
      assert.equal(local.calls, 1);
    });

    await t.step("a tool mapped to its own scope needs it; the others do not", async () => {
      const { token } = await ws.token(["app.access", "upstream.tiny"]);
      const { status, response } = await ws.call(token, "tiny__add", { a: 1, b: 2 });
      assert.equal(status, 403);
      const challenge = response.headers.get("WWW-Authenticate") ?? "";
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="app.access upstream.tiny upstream.tiny.write"/);
      assert.equal((await call(token, "tiny__echo")).result.content[0].text, "echo");
      assert.equal(
        (await listed(ws, token)).get("tiny__add").description,
        "Adds two numbers. Requires scope upstream.tiny.write.",
      );
    });

    await t.step("a hidden tool is neither listed nor callable", async () => {
      const calls = tiny.calls;
      const refused = await call(owner, "tiny__secret");
      assert.match(refused.error.message, /tiny__secret/);
      assert.equal(tiny.calls, calls, "the upstream never heard of it");
    });

    await t.step(
      "the upstream's rate limit refuses the third quick call, not others'",
      async () => {
        const { token } = await ws.token(ALL, { clientId: "hasty-agent" });
        for (const a of [1, 2]) {
          assert.deepEqual((await call(token, "tiny__add", { a, b: 1 })).result.structuredContent, {
            sum: a + 1,
          });
        }
        const calls = tiny.calls;
        const third = (await call(token, "tiny__echo")).result;
        assert.equal(third.isError, true);
        assert.match(
          third.content[0].text,
          /^Too many calls of Tiny's tools: retry after \d+ seconds?$/,
        );
        assert.equal(tiny.calls, calls, "refused before the upstream");
        assert.equal((await call(token, "vault__open")).result.content[0].text, "open");
        assert.equal(
          (await call(owner, "tiny__echo")).result.content[0].text,
          "echo",
          "per client",
        );
      },
    );

    await t.step(
      "the operator listener counts calls per upstream and says which answer",
      async () => {
        const text = await scrape(ws.server.adminUrl);
        // Calls that reached tiny and ended well: echo (scope step), add twice, echo (owner).
        assert.equal(
          sample(text, 'vestibule_upstream_calls_total{upstream="tiny",outcome="ok"}'),
          4,
        );
        assert.equal(
          sample(text, 'vestibule_upstream_calls_total{upstream="vault",outcome="ok"}'),
          2,
        );
        assert.equal(sample(text, 'vestibule_upstream_up{upstream="tiny"}'), 1);
        assert.equal(sample(text, 'vestibule_upstream_up{upstream="vault"}'), 1);
        assert.equal(sample(text, 'vestibule_upstream_up{upstream="dead"}'), 0);
        assert.match(text, /vestibule_upstream_call_duration_seconds_count\{upstream="tiny"\} 4/);
        await promtoolAccepts(text);
      },
    );
  } finally {
    await ws.close();
    await Promise.all([tiny.close(), vault.close(), local.close()]);
    await Deno.remove(file);
    await Deno.remove(dir, { recursive: true });
  }
});

/** `promtool check metrics` accepts the exposition, when promtool is installed. */
async function promtoolAccepts(text: string): Promise<void> {
  if (!PROMTOOL) {
    console.warn("scopes_and_roles_test: promtool not found; the exposition was not checked");
    return;
  }
  await assertPromtoolAccepts(text);
}
