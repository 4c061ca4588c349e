// The official MCP SDK client (nobody here wrote it) with its OAuth client provider takes the
// whole journey to upstream tools: the 401, discovery, registration, the human's consent, then
// a step-up for each upstream's scope; it calls server-everything's tools, sees progress,
// cancels with an AbortSignal, and meets a gated tool: the owner approves it on the approval
// page (which shows the upstream, the tool and the exact arguments), get_approval returns the
// stored result, and the upstream was called once after approval and never after a decline.
// The human here is the cookie-keeping fetch browser, so this runs without Chromium;
// tests/browser/gateway_approval_browser_test.ts has the owner do the same in Chromium.
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/index.js";
import { UnauthorizedError } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/auth.js";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/sdk@^1.32.2/client/streamableHttp.js";
import { createAccounts } from "../../../src/accounts/accounts.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import { startEverythingHttp } from "../../../testkit/upstreams.ts";
import { MemoryProvider } from "../../interop/memory_provider.ts";
import { hiddenField } from "../support/accounts_browser.ts";
import { until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { consent, oauthFixture, ownerBrowser } from "../support/oauth_helpers.ts";

interface Pending {
  readonly gateId: string;
  readonly status: string;
  readonly approvalUrl: string;
}

Deno.test("the MCP SDK client reaches upstream tools through OAuth, progress, cancel and approval", async (t) => {
  const everything = await startEverythingHttp();
  const tiny = startTinyUpstream();
  const file = await writeUpstreamsFile([
    { name: "everything", title: "Everything", url: everything.url, gated: ["get-sum"] },
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["add"] },
  ]);
  const fx = await oauthFixture({ VESTIBULE_UPSTREAMS: file });
  const { apiUrl } = fx.server;
  const provider = new MemoryProvider("http://127.0.0.1:8976/callback");
  const human = await ownerBrowser(fx, "owner@example.com", "Acme Outdoor");
  const accounts = createAccounts(fx.server.store, fx.clock.now);
  const owner = await accounts.findAccountByEmail("owner@example.com");
  const [acme] = await accounts.listBusinessesOf(owner!.id);
  const audit = () => createAuditLog(fx.server.store, fx.clock.now).list(acme!.business.id);
  const connection = () => ({
    client: new Client({ name: "vestibule-gateway-interop", version: "1.0.0" }),
    transport: new StreamableHTTPClientTransport(new URL(`${apiUrl}/api/mcp`), {
      authProvider: provider,
    }),
  });
  let { client, transport } = connection();
  /** The human consents to what the client asked last; the client finishes with the code. */
  const authorize = async () => {
    const location = await consent(human, fx, provider.authorizationUrls.at(-1)!.href);
    await transport.finishAuth(location.searchParams.get("code")!);
  };
  /** A call that may first meet a step-up: the human grants it, and the client calls again. */
  const callGranting = async (name: string, args: Record<string, unknown>) => {
    try {
      return await client.callTool({ name, arguments: args });
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      await authorize();
      return await client.callTool({ name, arguments: args });
    }
  };
  const approval = async (gateId: string) =>
    (await client.callTool({ name: "get_approval", arguments: { gateId } }))
      .structuredContent as Record<string, unknown>;
  const decide = async (pending: Pending, decision: "approve" | "decline") => {
    const page = await human.get(pending.approvalUrl);
    assert.equal(page.status, 200, page.text);
    const posted = await human.post(pending.approvalUrl, {
      csrf: hiddenField(page.text, "csrf"),
      decision,
    });
    assert.equal(posted.status, 303, posted.text);
    return page.text;
  };
  try {
    await t.step("meets the 401, registers, and the human consents", async () => {
      await assert.rejects(client.connect(transport), UnauthorizedError);
      await authorize();
      // A failed connect closes its transport: the SDK's agent connects afresh with the token.
      ({ client, transport } = connection());
      await client.connect(transport);
      assert.equal(provider.tokens()?.scope, "app.access");
    });

    await t.step("lists Vestibule's tools and the upstreams'", async () => {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        names.push(...page.tools.map((tool: { name: string }) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      for (const name of ["get_approval", "everything__echo", "everything__get-sum", "tiny__add"]) {
        assert.ok(names.includes(name), name);
      }
    });

    await t.step("asks for upstream.everything by step-up, then echo answers", async () => {
      const echoed = await callGranting("everything__echo", { message: "through the SDK" });
      assert.equal(provider.tokens()?.scope, "app.access upstream.everything");
      assert.deepEqual(echoed.content, [{ type: "text", text: "Echo: through the SDK" }]);
    });

    await t.step("a long-running call reports progress to onprogress", async () => {
      const seen: number[] = [];
      const done = await client.callTool(
        {
          name: "everything__trigger-long-running-operation",
          arguments: { duration: 1, steps: 3 },
        },
        undefined,
        { onprogress: (progress: { progress: number }) => seen.push(progress.progress) },
      );
      assert.deepEqual(seen, [1, 2, 3]);
      assert.match(JSON.stringify(done.content), /Long running operation completed/);
    });

    await t.step("an AbortSignal cancels a call, and the audit entry says so", async () => {
      const controller = new AbortController();
      const started = performance.now();
      const call = client.callTool(
        {
          name: "everything__trigger-long-running-operation",
          arguments: { duration: 60, steps: 120 },
        },
        undefined,
        { signal: controller.signal, onprogress: () => controller.abort("changed my mind") },
      );
      await assert.rejects(call);
      const entry = await until(
        "the cancelled call's audit entry",
        async () =>
          (await audit()).find((e) =>
            e.action === "everything__trigger-long-running-operation" &&
            e.summary.includes("(cancelled)")
          ),
      );
      assert.ok(performance.now() - started < 10_000, `${performance.now() - started} ms`);
      assert.match(entry.summary, /was cancelled by the agent/);
    });

    await t.step(
      "a gated get-sum waits for the owner, whose page shows what is asked",
      async () => {
        const asked = await client.callTool({
          name: "everything__get-sum",
          arguments: { a: 19, b: 23 },
        });
        const pending = asked.structuredContent as unknown as Pending;
        assert.equal(pending.status, "pending");
        assert.equal((await approval(pending.gateId)).status, "pending");
        const page = await decide(pending, "approve");
        assert.ok(page.includes("Call the tool get-sum of Everything once"), page);
        assert.ok(
          page.includes(
            "The tool <code>get-sum</code> of Everything",
          ),
          page,
        );
        assert.ok(
          page.includes("<pre>{\n  &quot;a&quot;: 19,\n  &quot;b&quot;: 23\n}</pre>"),
          page,
        );
        const decided = await until("the approved call's result", async () => {
          const view = await approval(pending.gateId);
          return view.result !== undefined && view;
        });
        assert.equal(decided.status, "approved");
        assert.match(JSON.stringify(decided.result), /42/);
      },
    );

    await t.step("approved, the upstream is called exactly once; declined, never", async () => {
      const ask = async (a: number, b: number) =>
        (await callGranting("tiny__add", { a, b })).structuredContent as unknown as Pending;
      const first = await ask(40, 2);
      assert.equal(tiny.calls, 0);
      await decide(first, "approve");
      const view = await until("the approved add's result", async () => {
        const v = await approval(first.gateId);
        return v.result !== undefined && v;
      });
      assert.deepEqual(view.result, {
        content: [{ type: "text", text: "42" }],
        structuredContent: { sum: 42 },
      });
      assert.equal(tiny.calls, 1);
      assert.equal(tiny.lastCall?.headers.get("Authorization"), null);
      const second = await ask(1, 1);
      await decide(second, "decline");
      assert.equal((await approval(second.gateId)).status, "declined");
      assert.equal(tiny.calls, 1);
    });
  } finally {
    await client.close();
    await fx.close();
    await everything.kill();
    await tiny.close();
    await Deno.remove(file);
  }
});
