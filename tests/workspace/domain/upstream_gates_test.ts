import assert from "node:assert/strict";
import type { ApprovedGate, UpstreamCalls } from "../../../src/workspace/domain/gate_actions.ts";
import { createFixture } from "../fixtures.ts";

const PINNED = "a".repeat(64);

Deno.test("a gated upstream call is made once on approval, and never once it expired", async (t) => {
  const made: ApprovedGate[] = [];
  // What the upstream lists of the tool at each look, the last one from then on.
  let listings: ReturnType<UpstreamCalls["listed"]>[] = [];
  const upstreams: UpstreamCalls = {
    title: (upstream) => upstream === "tiny" ? "Tiny" : null,
    listed: () => listings.length > 1 ? listings.shift()! : listings[0] ?? { hash: PINNED },
    gated: () => false,
    callApproved(gate, action) {
      made.push(gate);
      return Promise.resolve({
        outcome: `Called ${action.tool} of Tiny: answered (ok) in 1 ms`,
        ended: "done",
        result: { content: [{ type: "text", text: "3" }] },
        event: { type: "upstream.call_completed", data: { tool: action.tool } },
      });
    },
  };
  const f = await createFixture({ upstreams });
  const request = (expiresAt: number) =>
    f.gates.request({
      businessId: f.businessId,
      accountId: f.memberId,
      clientId: "client-1",
      clientName: "Client One",
      tool: "tiny__add",
      scope: "upstream.tiny",
      action: {
        type: "call_upstream",
        upstream: "tiny",
        tool: "add",
        arguments: { a: 1, b: 2 },
        argumentsSha256: "0".repeat(64),
        expiresAt,
        definitionSha256: PINNED,
      },
    });
  const pin = (hash: string) =>
    f.workspace.store.commit([], [
      f.workspace.upstreamPins.pin(f.businessId, "tiny", {
        definition: { name: "add" },
        hash,
        pinnedAt: 0,
        approvedBy: null,
      }),
    ]);
  /** Requests a call, lets `meanwhile` change things, then approves it. */
  const approve = async (meanwhile: () => unknown = () => {}) => {
    const asked = await request(f.clock.t + 60_000);
    assert.ok(asked.ok);
    await meanwhile();
    const decided = await f.gates.decide(asked.gate.id, f.ownerId, "approve");
    assert.ok(decided.kind === "decided");
    return decided.gate;
  };
  await pin(PINNED);
  try {
    await t.step("approved in time: called once, its result kept", async () => {
      const gate = await approve();
      assert.equal(made.length, 1);
      assert.deepEqual(await f.gates.result(gate), { content: [{ type: "text", text: "3" }] });
      assert.equal(gate.outcome, "Called add of Tiny: answered (ok) in 1 ms");
      assert.equal(gate.applied, true);
      assert.deepEqual((await f.gates.fullView(gate)).result, await f.gates.result(gate));
      const again = await f.gates.decide(gate.id, f.ownerId, "approve");
      assert.equal(again.kind, "already_decided");
      assert.equal(made.length, 1);
    });

    await t.step("approved after its expiry: not applied, never called", async () => {
      const asked = await request(f.clock.t + 1_000);
      assert.ok(asked.ok);
      f.clock.t += 2_000;
      const decided = await f.gates.decide(asked.gate.id, f.ownerId, "approve");
      assert.ok(decided.kind === "decided");
      assert.equal(decided.gate.applied, false);
      assert.match(decided.gate.outcome ?? "", /expired .*; the upstream was not called/);
      assert.equal(made.length, 1);
    });

    await t.step("declined: never called", async () => {
      const asked = await request(f.clock.t + 60_000);
      assert.ok(asked.ok);
      await f.gates.decide(asked.gate.id, f.ownerId, "decline");
      assert.equal(made.length, 1);
    });

    const LATER = "c".repeat(64);
    const refusals: [string, ReturnType<UpstreamCalls["listed"]>, RegExp][] = [
      ["hidden", "hidden", /^The operator hides the tool add of Tiny now/],
      ["no longer listed", "unlisted", /^Tiny no longer lists the tool add/],
      ["not listed yet", "unknown", /^Tiny has not listed its tools since/],
      ["held", { hash: "b".repeat(64) }, /^Tiny changed the definition of the tool add/],
      ["pinned anew", { hash: LATER }, /is no longer the one the call was requested under/],
    ];
    for (const [name, listing, words] of refusals) {
      await t.step(`approved once the tool is ${name}: not applied, never called`, async () => {
        listings = [{ hash: PINNED }];
        const gate = await approve(async () => {
          listings = [listing];
          if (name === "pinned anew") await pin(LATER);
        });
        await pin(PINNED);
        assert.equal(gate.applied, false);
        assert.match(gate.outcome ?? "", /^Approved, but not applied: /);
        assert.match((gate.outcome ?? "").slice("Approved, but not applied: ".length), words);
        assert.equal(made.length, 1);
      });
    }

    await t.step("hidden between the decision and the call: refused, not called", async () => {
      listings = [{ hash: PINNED }];
      const gate = await approve(() => listings = [{ hash: PINNED }, "hidden"]);
      assert.equal(gate.applied, false);
      assert.equal(gate.failed, undefined);
      assert.match(gate.outcome ?? "", /^Approved, but not applied: The operator hides the tool/);
      assert.equal(await f.gates.result(gate), null);
      assert.equal(made.length, 1);
    });
  } finally {
    await f.close();
  }
});
