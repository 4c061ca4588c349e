// The conformance scenarios that apply to a product server, counted in the test totals.
import assert from "node:assert/strict";
import { startTestServer } from "../blackbox/harness.ts";
import { APPLICABLE_SCENARIOS, ensureConformanceCli, runScenario } from "./conformance.ts";

Deno.test("MCP conformance suite: onboarding endpoint", async (t) => {
  const tools = await ensureConformanceCli();
  const server = await startTestServer();
  try {
    for (const scenario of APPLICABLE_SCENARIOS) {
      await t.step(scenario, async () => {
        const result = await runScenario(tools, `${server.authUrl}/mcp`, scenario);
        assert.ok(result.passed, `${scenario}: ${result.summary}\n${result.output}`);
      });
    }
  } finally {
    await server.close();
  }
});
