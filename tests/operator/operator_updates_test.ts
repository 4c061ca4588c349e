import assert from "node:assert/strict";
import * as v from "valibot";
import { CATALOGUE_LIMITS, CatalogueInputSchema } from "../../src/operator/operator_bodies.ts";
import { createOperatorUpdates } from "../../src/operator/operator_updates.ts";
import { OPERATOR_MAX_BODY } from "../../src/operator/operator_api.ts";
import { createFixture, type Fixture } from "../workspace/fixtures.ts";

/**
 * Text of `length` characters that cost as much in the store as in the body: U+0100 is two bytes
 * in UTF-8 and in a two-byte V8 string, where ASCII or Latin-1 would be stored smaller.
 */
const wide = (length: number) => "\u0100".repeat(length);
/** The longest id, distinct per `n`. */
const longId = (prefix: string, n: number) => `${prefix}-${n}-`.padEnd(64, "x");

function updates(f: Fixture) {
  return createOperatorUpdates({ ...f, store: f.workspace.store });
}

/**
 * A catalogue with every list at its cap, every id at its longest, one pack at its largest and
 * workflow descriptions filling the rest of the largest body the API reads.
 */
function fullCatalogue() {
  const body = (descriptionLength: number) => {
    const workflows = Array.from({ length: CATALOGUE_LIMITS.workflows }, (_, i) => ({
      id: longId("wf", i),
      name: wide(50),
      description: wide(descriptionLength),
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
    }));
    return {
      workflows,
      triggers: Array.from({ length: CATALOGUE_LIMITS.triggers }, (_, i) => ({
        id: longId("trg", i),
        name: wide(50),
        event: "order.created",
        workflowId: workflows[i % workflows.length]!.id,
        enabled: true,
      })),
      packs: Array.from({ length: CATALOGUE_LIMITS.packs }, (_, i) => ({
        id: longId("pack", i),
        name: wide(i === 0 ? 200 : 20),
        vertical: wide(i === 0 ? 100 : 10),
        enabled: true,
        version: wide(i === 0 ? 50 : 5),
        latestVersion: wide(i === 0 ? 50 : 5),
        settings: i > 0 ? {} : Object.fromEntries(
          Array.from({ length: 50 }, (_, k) => [wide(62) + String(k).padStart(2, "0"), wide(500)]),
        ),
      })),
      billing: {
        subscription: {
          plan: "scale",
          status: "active",
          seats: 10,
          monthlyCents: 799_000,
          paymentMethod: wide(100),
          usage: { runs: 1, includedRuns: 2 },
          renewsAt: null,
        },
        invoices: Array.from({ length: CATALOGUE_LIMITS.invoices }, (_, i) => ({
          id: longId("inv", i),
          number: wide(20),
          amountCents: 1,
          currency: "EUR",
          status: "open",
          issuedAt: 1,
        })),
      },
    };
  };
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
  let length = 2000;
  while (bytes(body(length)) > OPERATOR_MAX_BODY) length -= 10;
  const largest = body(length);
  assert.ok(bytes(largest) > OPERATOR_MAX_BODY - 4096, "as large as the API reads");
  return v.parse(CatalogueInputSchema, largest);
}

Deno.test("replaceCatalogue: a catalogue at every limit fits one commit, twice over", async () => {
  const f = await createFixture();
  try {
    const catalogue = fullCatalogue();
    // The first replaces nothing; the second deletes nothing it does not write again.
    for (let round = 0; round < 2; round++) {
      const outcome = await updates(f).replaceCatalogue(f.businessId, catalogue);
      assert.ok(outcome.ok, JSON.stringify(!outcome.ok && outcome));
    }
    assert.equal((await f.workspace.triggers.list(f.businessId)).length, CATALOGUE_LIMITS.triggers);
    // And one that renames every record: all the old ones deleted, all the new ones written.
    const renamed = structuredClone(catalogue);
    for (const list of [renamed.workflows, renamed.packs, renamed.billing.invoices]) {
      for (const record of list) record.id = `x${record.id.slice(1)}`;
    }
    for (const trigger of renamed.triggers) {
      trigger.id = `x${trigger.id.slice(1)}`;
      trigger.workflowId = `x${trigger.workflowId.slice(1)}`;
    }
    const outcome = await updates(f).replaceCatalogue(f.businessId, renamed);
    assert.ok(outcome.ok, JSON.stringify(!outcome.ok && outcome));
    const ids = (await f.workspace.workflows.list(f.businessId)).map((w) => w.id[0]);
    assert.deepEqual(new Set(ids), new Set(["x"]));
  } finally {
    f.close();
  }
});

Deno.test("replaceCatalogue: more old records than one commit can delete are removed in steps before it", async () => {
  const f = await createFixture();
  try {
    // Triggers created one by one (approved requests) beyond what a catalogue may list.
    for (let i = 0; i < 2500; i++) {
      await f.workspace.triggers.put(f.businessId, {
        id: `old-${i}`,
        name: "Old",
        event: "order.created",
        workflowId: "wf",
        enabled: true,
        updatedAt: 0,
      });
    }
    const catalogue = fullCatalogue();
    const outcome = await updates(f).replaceCatalogue(f.businessId, catalogue);
    assert.ok(outcome.ok, JSON.stringify(!outcome.ok && outcome));
    const triggers = await f.workspace.triggers.list(f.businessId);
    assert.deepEqual(
      triggers.map((t) => t.id).sort(),
      catalogue.triggers.map((t) => t.id).sort(),
    );
    // 998 and 998 in two steps; the last commit deletes the other 504 beside its 452 writes.
    const entries = await f.audit.list(f.businessId);
    assert.deepEqual(entries.map((e) => e.summary).reverse(), [
      "Removed 998 records no longer listed, a step before replacing the catalogue",
      "Removed 998 records no longer listed, a step before replacing the catalogue",
      "Replaced the catalogue: 100 workflows, 200 triggers, 50 packs, 100 invoices, plan scale " +
      "(504 records no longer listed removed)",
    ]);
  } finally {
    f.close();
  }
});

Deno.test("replaceCatalogue: concurrent replacements apply whole, one after another", async () => {
  const f = await createFixture();
  try {
    const replacer = updates(f);
    const catalogueOf = (n: number) => {
      const catalogue = fullCatalogue();
      for (const workflow of catalogue.workflows) workflow.id = `r${n}-${workflow.id}`.slice(0, 64);
      for (const trigger of catalogue.triggers) trigger.workflowId = catalogue.workflows[0]!.id;
      return catalogue;
    };
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, (_, n) => replacer.replaceCatalogue(f.businessId, catalogueOf(n))),
    );
    assert.ok(outcomes.every((o) => o.ok), JSON.stringify(outcomes.find((o) => !o.ok)));
    // Whichever came last is the catalogue, whole: none merged into another.
    const ids = (await f.workspace.workflows.list(f.businessId)).map((w) => w.id).sort();
    const last = Number(ids[0]!.match(/^r(\d)-/)![1]);
    assert.deepEqual(ids, catalogueOf(last).workflows.map((w) => w.id).sort());
  } finally {
    f.close();
  }
});

Deno.test("updateWorkflowRun: a report that raced another is planned again on what it wrote", async () => {
  const f = await createFixture();
  try {
    const run = {
      id: "run-1",
      workflowId: "wf",
      status: "running" as const,
      startedAt: 1,
      finishedAt: null,
      approvedBy: null,
      gateId: null,
      result: null,
      costCents: null,
      updatedAt: 1,
    };
    await f.workspace.runs.put(f.businessId, run);
    const store = f.workspace.store;
    let raced = false;
    // Another report lands between this one's read and its commit.
    const racing = {
      ...store,
      async commit(...args: Parameters<typeof store.commit>) {
        if (!raced) {
          raced = true;
          await f.workspace.runs.put(f.businessId, { ...run, status: "failed", finishedAt: 2 });
        }
        return await store.commit(...args);
      },
    };
    const outcome = await createOperatorUpdates({ ...f, store: racing })
      .updateRun(f.businessId, "run-1", { status: "succeeded" });
    assert.deepEqual(outcome, {
      ok: false,
      status: 409,
      error: "conflict",
      message: 'workflow run "run-1" already failed: a finished run does not change',
    });
    assert.equal((await f.workspace.runs.get(f.businessId, "run-1"))!.value.status, "failed");
    assert.deepEqual(await f.audit.list(f.businessId), [], "nothing audited");
  } finally {
    f.close();
  }
});
