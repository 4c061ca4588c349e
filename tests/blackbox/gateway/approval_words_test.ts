// Approvals a person can tell apart: three refunds of a gated upstream tool, each with its own
// arguments, read apart in the approvals list, in the owners' mails and in the audit log, and an
// approval page that shows the tool's own description, the upstream's title and when it expires.
import assert from "node:assert/strict";
import { canonicalSha256 } from "../../../src/canonical_json.ts";
import { startTinyUpstream } from "../../../testkit/tiny_upstream.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";
import { hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { signIn } from "../support/workspace_support.ts";
import { startGatewayServer, until } from "../support/gateway_support.ts";

const REFUND: TinyTool = {
  definition: {
    name: "refund_customer",
    description: "Refunds an order to the card it was paid with.",
    inputSchema: { type: "object" },
  },
  handler: ({ order }) => ({ content: [{ type: "text", text: `refunded ${order}` }] }),
};

const REFUNDS = [
  { order: 1042, amount: "120.00", currency: "USD" },
  { order: 1043, amount: "7.50", currency: "EUR" },
  { order: 2001, amount: "99.99", currency: "GBP", note: "<b>damaged</b>" },
] as const;

Deno.test("three refunds read apart: list rows, mails, audit and the approval page", async (t) => {
  const upstream = startTinyUpstream({ tools: [REFUND] });
  const outbox = await tempOutbox();
  const ws = await startGatewayServer(
    [{ name: "acme", title: "Acme billing", url: upstream.url, gated: ["refund_customer"] }],
    { VESTIBULE_MAIL: outbox.env, VESTIBULE_RATE_LIMITS: "off" },
  );
  try {
    const { token } = await ws.token(["app.access", "upstream.acme"]);
    const gateIds: string[] = [];
    for (const args of REFUNDS) {
      const { message } = await ws.call(token, "acme__refund_customer", { ...args });
      assert.equal(message.result.structuredContent.status, "pending");
      gateIds.push(message.result.structuredContent.gateId);
    }
    const owner = await signIn(ws, outbox, "owner@example.com");

    await t.step("each list row holds its link and its own argument values", async () => {
      const list = await owner.get(`${ws.server.authUrl}/approvals`);
      assert.equal(list.status, 200);
      const rows = list.text.split('<li class="approval">').slice(1);
      assert.equal(rows.length, 3);
      REFUNDS.forEach((args, i) => {
        const row = rows.find((r) => r.includes(`href="/approvals/${gateIds[i]}"`));
        assert.ok(row, `a row links /approvals/${gateIds[i]}`);
        assert.ok(
          row.includes(
            `refund_customer — order ${args.order}, amount ${args.amount}, currency ${args.currency}`,
          ),
          row,
        );
        assert.ok(row.includes("asked by owner@example.com through "), row);
        assert.ok(row.includes(" UTC"), "when it was asked");
      });
      assert.ok(rows[0]!.includes("currency GBP, …"), "past three arguments, an ellipsis");
      assert.ok(!list.text.includes("<b>damaged</b>"), "escaped");
    });

    await t.step("the request mail carries them in its subject and body", async () => {
      const mails = (await outbox.read()).filter((m) => m.subject.startsWith("Approval needed"));
      assert.equal(mails.length, 3);
      for (const args of REFUNDS) {
        const mail = mails.find((m) => m.subject.includes(`order ${args.order},`));
        assert.ok(mail, `a subject names order ${args.order}`);
        assert.ok(mail.text.includes(`"order": ${args.order}`), mail.text);
        assert.ok(mail.text.includes(`"amount": "${args.amount}"`), mail.text);
      }
    });

    await t.step(
      "the page: the tool's description, the title, the SHA-256 once, Expires",
      async () => {
        const page = await owner.get(`${ws.server.authUrl}/approvals/${gateIds[0]}`);
        assert.ok(page.text.includes("Refunds an order to the card it was paid with."));
        assert.ok(page.text.includes("The tool <code>refund_customer</code> of Acme billing"));
        assert.ok(!page.text.includes("<code>acme</code>"), "the title, not the name");
        const sha = canonicalSha256(REFUNDS[0]);
        assert.equal(page.text.split(sha).length - 1, 1);
        assert.match(page.text, new RegExp(`<details[^>]*><summary>[^<]*</summary><code>${sha}`));
        assert.ok(page.text.includes("Expires"));
        assert.ok(!page.text.includes("Approved after"));
      },
    );

    await t.step("the audit log reads Owner approved / Owner declined, naming what", async () => {
      const decide = async (gateId: string, decision: string) => {
        const url = `${ws.server.authUrl}/approvals/${gateId}`;
        const page = await owner.get(url);
        const posted = await owner.post(url, { csrf: hiddenField(page.text, "csrf"), decision });
        assert.equal(posted.status, 303);
        return await owner.get(url);
      };
      const approved = await decide(gateIds[0]!, "approve");
      assert.equal(approved.text.split(canonicalSha256(REFUNDS[0])).length - 1, 1);
      await decide(gateIds[1]!, "decline");
      const entries = await until("the approved call's entry", async () => {
        const entries = await ws.audit();
        return entries.some((e) =>
            e.gateId === gateIds[0] && e.actor === "agent" &&
            e.summary.startsWith("Called")
          )
          ? entries
          : undefined;
      });
      const human = entries.filter((e) => e.actor === "human");
      assert.deepEqual(
        human.map((e) => [e.gateId, e.summary]).sort(),
        [
          [
            gateIds[0],
            "Owner approved: refund_customer — order 1042, amount 120.00, currency USD",
          ],
          [
            gateIds[1],
            "Owner declined: refund_customer — order 1043, amount 7.50, currency EUR",
          ],
        ].sort(),
      );
    });
  } finally {
    await ws.close();
    await upstream.close();
  }
});
