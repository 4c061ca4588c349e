// Replacing the catalogue through the operator API: wholly or not at all, with a precise 400
// naming the bad field, audited once; concurrent replacements, in one process and across two
// replicas on PostgreSQL, leave one whole catalogue.
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import {
  CATALOGUE,
  type Json,
  type OperatorServer,
  startOperatorServer,
} from "./operator_api_support.ts";

Deno.test("replaceCatalogue: replaced wholly, or not at all", async (t) => {
  const op = await startOperatorServer();
  const path = `/v1/businesses/${op.businessId}/catalogue`;
  try {
    // What was there before: one workflow the new catalogue no longer lists.
    await op.workspace.workflows.put(op.businessId, {
      id: "wf-old",
      name: "Old",
      description: "",
      kind: "internal",
      costPerRunCents: 0,
      status: "active",
      updatedAt: 1_000,
    });
    let stored: Json;
    await t.step(
      "the whole catalogue is replaced; the agent reads it, updatedAt stamped",
      async () => {
        const before = Date.now();
        const answer = await op.api("PUT", path, CATALOGUE);
        assert.equal(answer.status, 200, JSON.stringify(answer.json));
        stored = answer.json;
        const at = stored.workflows[0].updatedAt;
        assert.ok(at >= before);
        const stamp = <T extends object>(records: T[]) =>
          records.map((r) => ({ ...r, updatedAt: at }));
        assert.deepEqual(stored, {
          workflows: stamp(CATALOGUE.workflows),
          triggers: stamp(CATALOGUE.triggers),
          packs: stamp(CATALOGUE.packs),
          billing: {
            subscription: { ...CATALOGUE.billing.subscription, updatedAt: at },
            invoices: stamp(CATALOGUE.billing.invoices),
          },
        });
        const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
        assert.deepEqual(
          (await op.agentReads("list_workflows")).workflows.sort(byId),
          [...stored.workflows].sort(byId),
          "wf-old is gone",
        );
        assert.deepEqual((await op.agentReads("list_triggers")).triggers, stored.triggers);
        assert.deepEqual((await op.agentReads("list_packs")).packs, stored.packs);
        assert.deepEqual(await op.agentReads("get_billing_summary"), stored.billing.subscription);
        assert.deepEqual((await op.agentReads("list_invoices")).invoices, stored.billing.invoices);
      },
    );

    const bad = structuredClone(CATALOGUE) as Json;
    bad.workflows.push({ ...CATALOGUE.workflows[0], id: "wf-new" });
    bad.workflows[1].kind = "premium";
    const cases: [string, Json, string][] = [
      ["a bad item halfway", bad, '"workflows.1.kind": must be live, paid or internal'],
      [
        "a trigger of a workflow not in the catalogue",
        { ...CATALOGUE, triggers: [{ ...CATALOGUE.triggers[0], workflowId: "wf-gone" }] },
        '"triggers.0.workflowId": "wf-gone" is no workflow of this catalogue',
      ],
      [
        "an id listed twice",
        { ...CATALOGUE, packs: [CATALOGUE.packs[0], CATALOGUE.packs[0]] },
        '"packs.1.id": "pack-apparel" is listed twice',
      ],
      [
        "a list left out",
        { workflows: [], triggers: [], packs: [] },
        '"billing": is required',
      ],
      [
        "an id a store key cannot carry",
        { ...CATALOGUE, workflows: [{ ...CATALOGUE.workflows[0], id: "wf/ä" }] },
        '"workflows.0.id": must be letters, digits and . _ : ~ - only',
      ],
      [
        "a workflow name with a line break (approval mails show it)",
        { ...CATALOGUE, workflows: [{ ...CATALOGUE.workflows[0], name: "Refunds\r\nApprove" }] },
        '"workflows.0.name": must not contain control characters such as a line break',
      ],
      [
        "a bad invoice currency",
        {
          ...CATALOGUE,
          billing: {
            ...CATALOGUE.billing,
            invoices: [{ ...CATALOGUE.billing.invoices[0], currency: "usd" }],
          },
        },
        '"billing.invoices.0.currency": must be an ISO 4217 code such as USD',
      ],
    ];
    for (const [name, body, message] of cases) {
      await t.step(`${name}: 400 naming the field, the old catalogue kept`, async () => {
        const answer = await op.api("PUT", path, body);
        assert.equal(answer.status, 400, JSON.stringify(answer.json));
        assert.deepEqual(answer.json, { error: "invalid_request", message });
        assert.deepEqual((await op.agentReads("list_triggers")).triggers, stored.triggers);
        assert.equal((await op.agentReads("list_workflows")).workflows.length, 2);
        assert.deepEqual(await op.agentReads("get_billing_summary"), stored.billing.subscription);
      });
    }
    await t.step("audited once, as the operator's", async () => {
      const entries = await createAuditLog(op.server.store, Date.now).list(op.businessId);
      assert.deepEqual(
        entries.map((e) => [e.action, e.actor, e.accountId, e.summary]),
        [[
          "replaceCatalogue",
          "operator",
          null,
          "Replaced the catalogue: 2 workflows, 1 trigger, 1 pack, 1 invoice, plan growth " +
          "(1 record no longer listed removed)",
        ]],
      );
    });
  } finally {
    await op.close();
  }
});

/** A catalogue of 100 workflows whose ids say which of several it is. */
const numberedCatalogue = (n: number) => ({
  ...CATALOGUE,
  workflows: Array.from({ length: 100 }, (_, i) => ({
    ...CATALOGUE.workflows[0],
    id: `c${n}-wf-${i}`,
  })),
  triggers: [],
});

/** The workflows stored now, if they are exactly one numbered catalogue: its number. */
async function wholeCatalogue(op: OperatorServer): Promise<number> {
  const ids = (await op.workspace.workflows.list(op.businessId)).map((w) => w.id).sort();
  const n = Number(ids[0]?.match(/^c(\d+)-/)?.[1]);
  assert.deepEqual(ids, numberedCatalogue(n).workflows.map((w) => w.id).sort(), "one, whole");
  return n;
}

Deno.test("concurrent catalogue replacements apply whole, in turn, and a catalogue over the cap is replaced", async () => {
  const op = await startOperatorServer();
  const path = `/v1/businesses/${op.businessId}/catalogue`;
  try {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) => op.api("PUT", path, numberedCatalogue(n))),
    );
    assert.deepEqual(answers.map((a) => a.status), Array(12).fill(200));
    await wholeCatalogue(op);

    // What racing replacements once left behind: 1,200 workflows, twelve times the cap.
    for (let n = 0; n < 12; n++) {
      for (const { id } of numberedCatalogue(n).workflows) {
        await op.workspace.workflows.put(op.businessId, {
          id,
          name: "Left over",
          description: "",
          kind: "internal",
          costPerRunCents: 0,
          status: "active",
          updatedAt: 0,
        });
      }
    }
    const replaced = await op.api("PUT", path, numberedCatalogue(99));
    assert.equal(replaced.status, 200, JSON.stringify(replaced.json));
    assert.equal(await wholeCatalogue(op), 99);
  } finally {
    await op.close();
  }
});

Deno.test("two replicas on PostgreSQL racing catalogue replacements leave one whole catalogue", async () => {
  const cluster = await startPgCluster();
  const url = await cluster.database();
  const a = await startOperatorServer(true, { dataUrl: url });
  const b = await startOperatorServer(true, { dataUrl: url });
  const path = `/v1/businesses/${a.businessId}/catalogue`;
  try {
    const answers = await Promise.all(
      Array.from(
        { length: 12 },
        (_, n) => (n % 2 === 0 ? a : b).api("PUT", path, numberedCatalogue(n)),
      ),
    );
    // In one process they wait their turn; across two, a replacement that keeps losing the race
    // may be told to send it again, never merged.
    for (const answer of answers) {
      if (answer.status === 200) continue;
      assert.deepEqual(answer, {
        ...answer,
        status: 409,
        json: {
          error: "conflict",
          message: "the record kept changing while this update was applied; send it again",
        },
      });
    }
    const n = await wholeCatalogue(a);
    assert.equal(answers[n]!.status, 200);
  } finally {
    await a.close();
    await b.close();
    await cluster.stop();
  }
});
