import assert from "node:assert/strict";
import type { ApprovedGate, UpstreamCalls } from "../../../src/workspace/domain/gate_actions.ts";
import { createFixture } from "../fixtures.ts";

Deno.test("a gated upstream call is made once on approval, and never once it expired", async (t) => {
  const made: ApprovedGate[] = [];
  const upstreams: UpstreamCalls = {
    title: (upstream) => upstream === "tiny" ? "Tiny" : null,
    gated: () => false,
    callApproved(gate, action) {
      made.push(gate);
      return Promise.resolve({
        outcome: `Called ${action.tool} of Tiny: answered (ok) in 1 ms`,
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
      },
    });
  try {
    await t.step("approved in time: called once, its result kept on the gate", async () => {
      const asked = await request(f.clock.t + 60_000);
      assert.ok(asked.ok);
      const decided = await f.gates.decide(asked.gate.id, f.ownerId, "approve");
      assert.equal(decided.kind, "decided");
      assert.equal(made.length, 1);
      const gate = (await f.gates.get(asked.gate.id))!;
      assert.deepEqual(gate.result, { content: [{ type: "text", text: "3" }] });
      assert.equal(gate.outcome, "Called add of Tiny: answered (ok) in 1 ms");
      assert.deepEqual(f.gates.view(gate).result, gate.result);
      const again = await f.gates.decide(asked.gate.id, f.ownerId, "approve");
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
  } finally {
    await f.close();
  }
});
