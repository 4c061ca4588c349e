import assert from "node:assert/strict";
import { createToolRegistry } from "../../../src/mcp/registry.ts";
import { SUPPORTED_SCOPES } from "../../../src/oauth/scopes.ts";
import { createWorkspaceTools } from "../../../src/workspace/mcp/catalogue.ts";
import { PendingApprovalSchema } from "../../../src/workspace/mcp/scoped_tool.ts";
import { PREPARES_HUMAN_DECISION } from "../../../src/onboarding/list_scopes.ts";
import { createFixture } from "../../workspace/fixtures.ts";

const OPENID_SCOPES = new Set(["openid", "profile", "email", "offline_access"]);

Deno.test("workspace catalogue", async (t) => {
  const f = await createFixture();
  const tools = createWorkspaceTools(f);
  try {
    await t.step("registers with the MCP registry (valid names and schemas)", () => {
      const registry = createToolRegistry(tools, { pageSize: 20 });
      assert.equal(registry.descriptions.length, tools.length);
      for (const d of registry.descriptions) {
        assert.equal(d.outputSchema?.type, "object", d.name);
        assert.equal(
          (d._meta as Record<string, unknown>)["vestibule/scope"],
          tools.find((t) => t.name === d.name)?.scope,
        );
      }
    });

    await t.step("every tool names a supported scope in its description and _meta", () => {
      for (const tool of tools) {
        const { scope } = tool;
        assert.ok(SUPPORTED_SCOPES.includes(scope), tool.name);
        assert.ok(tool.description.endsWith(`Requires scope ${scope}.`), tool.name);
      }
    });

    await t.step(
      "list_scopes says which scopes prepare a human decision: those with a gated tool",
      () => {
        const gated = new Set(
          tools.filter((t) => t.output === PendingApprovalSchema).map((t) => t.scope),
        );
        assert.deepEqual([...PREPARES_HUMAN_DECISION].sort(), [...gated].sort());
      },
    );

    await t.step("every delegated scope of spec §5 has at least one tool", () => {
      const covered = new Set(tools.map((tool) => tool.scope));
      const missing = SUPPORTED_SCOPES.filter((s) => !OPENID_SCOPES.has(s) && !covered.has(s));
      assert.deepEqual(missing, []);
    });

    await t.step("the connection test tools are named as the spec says and come first", () => {
      assert.deepEqual(tools.slice(0, 2).map((t) => t.name), [
        "get_agent_connection_setup",
        "verify_agent_connection",
      ]);
    });

    await t.step("annotations: reads are read-only, gated tools are not destructive", () => {
      for (const tool of tools) {
        const a = tool.annotations;
        assert.equal(typeof a.readOnlyHint, "boolean", tool.name);
        assert.equal(typeof a.destructiveHint, "boolean", tool.name);
        if (tool.name.startsWith("list_") || tool.name.startsWith("get_billing")) {
          assert.equal(a.readOnlyHint, true, tool.name);
        }
        if (a.readOnlyHint) assert.equal(a.destructiveHint, false, tool.name);
      }
      const destructive = tools.filter((t) => t.annotations.destructiveHint).map((t) => t.name);
      assert.ok(destructive.includes("disable_trigger"));
      assert.ok(destructive.includes("revoke_automation_authority"));
    });
  } finally {
    f.close();
  }
});
