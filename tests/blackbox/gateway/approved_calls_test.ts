// Approved calls of gated upstream tools, end to end: a real server in front of two tiny
// upstreams, an owner deciding on the approval page, the agent reading get_approval, the
// requester's decision mail, the audit log and the events. An approval runs only the definition
// the owner could read; a large answer is kept whole; a failed call reads as failed.
import assert from "node:assert/strict";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import {
  type Browser,
  hiddenField,
  signInThroughForms,
  tempOutbox,
} from "../support/accounts_browser.ts";
import { startTestServer } from "../support/harness.ts";
import { startTestReceiver } from "../support/webhook_receiver.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";
import { listed, until, writeUpstreamsFile } from "../support/gateway_support.ts";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { storeFile } from "../support/server_runtime.ts";

const SCOPES = ["app.access", "upstream.tiny", "upstream.bank"];
/** 100 000 characters: more than a store record holds, less than maxResponseBytes. */
const LARGE = "x".repeat(100_000);

const PAY: TinyTool = {
  definition: {
    name: "pay",
    description: "Pays an invoice.",
    inputSchema: { type: "object", properties: { invoice: { type: "string" } } },
  },
  handler: ({ invoice }) => ({ content: [{ type: "text", text: `paid ${invoice}` }] }),
};
const REWRITTEN_PAY: TinyTool = {
  ...PAY,
  definition: { ...PAY.definition, description: "Pays an invoice to the account in `to`." },
};
const REFUND: TinyTool = {
  definition: { name: "refund", description: "Refunds.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: "refunded" }] }),
};
const REPORT: TinyTool = {
  definition: { name: "report", description: "A long report.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: LARGE }] }),
};
const TRANSFER: TinyTool = {
  definition: { name: "transfer", description: "Moves money.", inputSchema: { type: "object" } },
  handler: () => ({ content: [{ type: "text", text: "moved" }] }),
};

Deno.test("an approved upstream call runs as the owner read it, kept whole, failed as failed", async (t) => {
  // `echo` never changes; calling it applies the next tool list and tells the gateway on the
  // answer's event stream (notifications/tools/list_changed), as a real upstream would.
  let next: TinyTool[] | null = null;
  const echo: TinyTool = {
    definition: { name: "echo", description: "Echoes.", inputSchema: { type: "object" } },
    handler(args) {
      if (next !== null) tiny.setTools([echo, ...next], { notify: true });
      next = null;
      return { content: [{ type: "text", text: JSON.stringify(args) }] };
    },
  };
  const tiny = startTinyUpstream({ answer: "sse", tools: [echo, PAY, REFUND, REPORT] });
  const bank = startTinyUpstream({ tools: [TRANSFER] });
  const receiver = await startTestReceiver();
  const outbox = await tempOutbox();
  const file = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["pay", "refund", "report"] },
    { name: "bank", title: "Bank", url: bank.url, gated: ["transfer"] },
  ]);
  const ws = await startWorkspaceServer({
    VESTIBULE_UPSTREAMS: file,
    VESTIBULE_MAIL: outbox.env,
    VESTIBULE_RATE_LIMITS: "off",
    ...receiver.env,
  });
  const audit = createAuditLog(ws.server.store, Date.now);
  const { token } = await ws.token(SCOPES);
  const call = async (name: string, args: Record<string, unknown>) => {
    const { status, message } = await ws.call(token, name, args);
    assert.equal(status, 200, JSON.stringify(message));
    return message.result;
  };
  const request = async (name: string, args: Record<string, unknown>) => {
    const pending = (await call(name, args)).structuredContent;
    assert.equal(pending.status, "pending", JSON.stringify(pending));
    return pending as { gateId: string; approvalUrl: string };
  };
  const approval = async (gateId: string) =>
    (await call("get_approval", { gateId })).structuredContent;
  /** Approves on the page; the confirmation page it is sent to. */
  const approve = async (browser: Browser, url: string) => {
    const page = await browser.get(url);
    assert.equal(page.status, 200, page.text);
    const decided = await browser.post(url, {
      csrf: hiddenField(page.text, "csrf"),
      decision: "approve",
    });
    assert.equal(decided.status, 303, decided.text);
    return await browser.get(`${url}?decided`);
  };
  const change = async (tools: TinyTool[]) => {
    next = tools;
    assert.equal((await call("tiny__echo", {})).isError, undefined);
  };
  const decisionMail = (gateId: string) =>
    until(
      "the decision mail",
      async () =>
        (await outbox.read()).find((m) =>
          m.link.endsWith(`/approvals/${gateId}`) && !m.subject.startsWith("Approval needed")
        ),
    );
  let owner: Browser | undefined;
  try {
    owner = await signIn(ws, outbox, "owner@example.com");
    assert.deepEqual(
      [...(await listed(ws, token)).keys()],
      ["tiny__echo", "tiny__pay", "tiny__refund", "tiny__report"],
    );

    await t.step(
      "a 100 KB answer is kept whole, with its audit entry, event and mail",
      async () => {
        const pending = await request("tiny__report", {});
        const page = await approve(owner!, pending.approvalUrl);
        assert.equal(page.status, 200);
        assert.ok(page.text.includes("Approved and applied"), page.text);
        assert.ok(page.text.includes('id="result-cut"'), "the page shows the beginning only");
        const view = await approval(pending.gateId);
        assert.equal(view.status, "approved");
        assert.equal(view.applied, true);
        assert.deepEqual(view.result, { content: [{ type: "text", text: LARGE }] });
        const entry = (await audit.list(ws.businessId)).find((e) =>
          e.gateId === pending.gateId && e.action === "tiny__report"
        );
        assert.match(entry?.summary ?? "", /^Called report of Tiny: answered \(ok\)/);
        await until(
          "upstream.call_completed",
          () =>
            receiver.accepted.find((e) =>
              e.type === "upstream.call_completed" && e.data.gateId === pending.gateId
            ),
        );
        const mail = await decisionMail(pending.gateId);
        assert.match(mail.subject, /^Approved in Acme Outdoor: /);
        // What the upstream answered the owner's call is not a member's to read.
        const { token: memberToken } = await ws.token(["app.access"], { accountId: ws.memberId });
        const { message } = await ws.call(memberToken, "get_approval", { gateId: pending.gateId });
        assert.equal(message.result.isError, true);
        assert.equal(message.result.structuredContent, undefined);
      },
    );

    await t.step("a call that failed reads as failed, and says what comes next", async () => {
      const pending = await request("bank__transfer", { amount: 10 });
      await bank.close();
      const page = await approve(owner!, pending.approvalUrl);
      const status = page.text.match(/<span id="gate-status">([^<]*)<\/span>/)?.[1];
      assert.equal(status, "Approved; the call failed");
      const confirmation = page.text.match(/<div[^>]*id="decision-confirmation"[^>]*>/)?.[0];
      assert.match(confirmation ?? "", /warning/, confirmation);
      assert.ok(page.text.includes("You approved it, but it failed."), page.text);
      assert.ok(!page.text.includes("Done: "), "never reads as done");
      const view = await approval(pending.gateId);
      assert.equal(view.applied, false);
      assert.equal(view.failed, true);
      assert.match(
        view.outcome,
        /^The call failed\. Called transfer of Bank: could not be reached/,
      );
      assert.match(
        view.outcome,
        /the agent may call the tool again, which asks for a new approval$/,
      );
      assert.equal(view.result.isError, true);
      const entry = (await audit.list(ws.businessId)).find((e) =>
        e.gateId === pending.gateId && e.action === "bank__transfer"
      );
      assert.match(entry?.summary ?? "", /^The call failed\./);
      const mail = await decisionMail(pending.gateId);
      assert.match(mail.subject, /^Approved, but failed in Acme Outdoor: /);
      assert.ok(mail.text.includes("The call failed."), mail.text);
      assert.ok(!mail.text.includes("Done:"), mail.text);
    });

    await t.step("a call requested before its tool changed is never made", async () => {
      const first = await request("tiny__pay", { invoice: "A-1" });
      const second = await request("tiny__pay", { invoice: "A-2" });
      await change([REWRITTEN_PAY, REFUND, REPORT]);
      // Held, its calls are refused with the link to the change's approval (before the pins are
      // read again, a new request is refused for the same reason, without it).
      const changeUrl = await until("the changed pay held", async () => {
        const result = await call("tiny__pay", { invoice: "A-0" });
        return result.isError === true
          ? (result.content[0].text as string).match(/approves the change at (\S+)$/)?.[1]
          : undefined;
      });
      const calls = tiny.calls;
      const status = (page: { text: string }) =>
        page.text.match(/<span id="gate-status">([^<]*)<\/span>/)?.[1];

      // The owner reads it before deciding, too.
      const before = await owner!.get(first.approvalUrl);
      assert.match(
        before.text,
        /id="gate-refusal"><strong>Approving will not apply this now.<\/strong> Tiny changed the definition of the tool pay/,
      );
      const refused = await approve(owner!, first.approvalUrl);
      assert.ok(!refused.text.includes('id="gate-refusal"'), "decided: the outcome says it");
      assert.equal(status(refused), "Approved, not applied");
      assert.ok(
        refused.text.includes(
          "Tiny changed the definition of the tool pay since an owner approved it",
        ),
        refused.text,
      );
      const view = await approval(first.gateId);
      assert.equal(view.applied, false);
      assert.match(view.outcome, /^Approved, but not applied: Tiny changed the definition/);
      assert.equal(view.result, undefined);

      // The owner approves the new definition: a call asked for under the old one still waits
      // for nothing; it is not made.
      await approve(owner!, changeUrl);
      await until(
        "the new definition served",
        async () =>
          (await listed(ws, token)).get("tiny__pay")?.description.startsWith(
            "Pays an invoice to the account",
          ),
      );
      const stale = await approve(owner!, second.approvalUrl);
      assert.equal(status(stale), "Approved, not applied");
      assert.ok(stale.text.includes("is no longer the one the call was requested under"));
      assert.equal(tiny.calls, calls, "neither call reached the upstream");

      const fresh = await request("tiny__pay", { invoice: "A-3" });
      await approve(owner!, fresh.approvalUrl);
      assert.deepEqual((await approval(fresh.gateId)).result.content, [
        { type: "text", text: "paid A-3" },
      ]);
    });

    await t.step("a call of a tool the upstream stopped listing is never made", async () => {
      const pending = await request("tiny__refund", {});
      await change([REWRITTEN_PAY, REPORT]);
      await until("refund gone", async () => !(await listed(ws, token)).has("tiny__refund"));
      const calls = tiny.calls;
      const page = await approve(owner!, pending.approvalUrl);
      assert.ok(page.text.includes("Tiny no longer lists the tool refund"), page.text);
      assert.equal((await approval(pending.gateId)).applied, false);
      assert.equal(tiny.calls, calls);
    });
  } finally {
    await ws.close();
    await tiny.close();
    await bank.close().catch(() => {});
    await receiver.close();
    await Deno.remove(file);
  }
});

Deno.test("an approved call of a tool the operator hid since is never made", async () => {
  const tiny = startTinyUpstream({ tools: [PAY] });
  const outbox = await tempOutbox();
  // One store across the restart that applies the operator's new upstreams file.
  const dir = await Deno.makeTempDir();
  const dataUrl = storeFile(`${dir}/store`);
  const gatedFile = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, gated: ["pay"] },
  ]);
  const hiddenFile = await writeUpstreamsFile([
    { name: "tiny", title: "Tiny", url: tiny.url, hidden: ["pay"] },
  ]);
  const env = { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" };
  const before = await startWorkspaceServer({ ...env, VESTIBULE_UPSTREAMS: gatedFile }, {
    dataUrl,
  });
  let after: Awaited<ReturnType<typeof startTestServer>> | undefined;
  try {
    const { token } = await before.token(["app.access", "upstream.tiny"]);
    const { message } = await before.call(token, "tiny__pay", { invoice: "B-1" });
    const { gateId } = message.result.structuredContent;
    await before.close();

    after = await startTestServer({ ...env, VESTIBULE_UPSTREAMS: hiddenFile }, { dataUrl });
    const owner = await signInThroughForms(after.authUrl, outbox, "owner@example.com");
    const url = `${after.authUrl}/approvals/${gateId}`;
    const page = await owner.get(url);
    assert.equal(page.status, 200, page.text);
    assert.ok(page.text.includes("The operator hides the tool pay of Tiny now"), page.text);
    const decided = await owner.post(url, {
      csrf: hiddenField(page.text, "csrf"),
      decision: "approve",
    });
    assert.equal(decided.status, 303, decided.text);
    const confirmed = await owner.get(`${url}?decided`);
    assert.match(confirmed.text, /<span id="gate-status">Approved, not applied<\/span>/);
    assert.ok(confirmed.text.includes("The operator hides the tool pay of Tiny now"));
    assert.equal(tiny.calls, 0);
  } finally {
    await (after ?? before).close();
    await tiny.close();
    await Deno.remove(gatedFile);
    await Deno.remove(hiddenFile);
    await Deno.remove(dir, { recursive: true });
  }
});
