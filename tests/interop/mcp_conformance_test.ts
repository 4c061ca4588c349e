// The conformance scenarios that apply to a product server, counted in the test totals.
import assert from "node:assert/strict";
import { startTestServer } from "../blackbox/support/harness.ts";
import {
  APPLICABLE_SCENARIOS,
  ensureConformanceCli,
  judge,
  labelOf,
  runScenario,
} from "./conformance.ts";

Deno.test("MCP conformance suite: onboarding endpoint", async (t) => {
  const tools = await ensureConformanceCli();
  const server = await startTestServer();
  try {
    for (const scenario of APPLICABLE_SCENARIOS) {
      await t.step(labelOf(scenario), async () => {
        const result = await runScenario(tools, `${server.authUrl}/mcp`, scenario);
        assert.ok(result.passed, `${result.label}: ${result.summary}\n${result.details}`);
      });
    }
  } finally {
    await server.close();
  }
});

Deno.test("conformance: only the listed failures, in their listed words, are excused", () => {
  const absent = {
    id: "sep-2549-prompts-list-caching-hints",
    status: "FAILURE",
    errorMessage: 'prompts/list returned JSON-RPC error -32601: Method not found: "prompts/list"',
  } as const;
  const ok = { id: "x", status: "SUCCESS" } as const;
  assert.equal(judge("s", [ok, absent]).passed, true);
  assert.match(judge("s", [ok, absent]).summary, /^1 passed, 1 not applicable, 0 failed/);
  // The same check failing for another reason is a failure.
  const wrong = { ...absent, errorMessage: "tools/list response missing ttlMs" };
  assert.equal(judge("s", [ok, wrong]).passed, false);
  // A check nobody excused is a failure.
  assert.equal(
    judge("s", [ok, { ...absent, id: "sep-2549-tools-list-caching-hints" }]).passed,
    false,
  );
  // Nothing that passed is no pass.
  assert.equal(judge("s", [absent]).passed, false);
});
