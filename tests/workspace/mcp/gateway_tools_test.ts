// VESTIBULE_WORKSPACE_TOOLS: the own tools a gateway-only workspace keeps are exactly those
// docs/workspace.md lists, each of the full catalogue; the setting takes `all` or `gateway`.
import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/config.ts";
import { ConfigError } from "../../../src/config/settings.ts";
import {
  createWorkspaceTools,
  GATEWAY_WORKSPACE_TOOLS,
} from "../../../src/workspace/mcp/catalogue.ts";
import { createFixture } from "../../workspace/fixtures.ts";

/** The tools of the sentence "serves, of its own tools, only …." in docs/workspace.md. */
async function documentedGatewayTools(): Promise<string[]> {
  const doc = await Deno.readTextFile(new URL("../../../docs/workspace.md", import.meta.url));
  const sentence = /serves, of its own tools, only ([^.]*)\./.exec(doc.replace(/\s+/g, " "));
  assert.ok(sentence, 'docs/workspace.md has no sentence "serves, of its own tools, only …"');
  return [...sentence[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
}

Deno.test("the gateway's own tools are those docs/workspace.md lists, in catalogue order", async () => {
  const documented = await documentedGatewayTools();
  assert.deepEqual([...documented].sort(), [...GATEWAY_WORKSPACE_TOOLS].sort());
  const f = await createFixture();
  try {
    const all = createWorkspaceTools(f).map((tool) => tool.name);
    const gateway = createWorkspaceTools(f, "gateway").map((tool) => tool.name);
    assert.deepEqual(gateway, all.filter((name) => GATEWAY_WORKSPACE_TOOLS.has(name)));
    assert.equal(gateway.length, GATEWAY_WORKSPACE_TOOLS.size, "each is a tool of the catalogue");
    // The contract's named tools stay.
    assert.ok(gateway.includes("get_agent_connection_setup"));
    assert.ok(gateway.includes("verify_agent_connection"));
  } finally {
    f.close();
  }
});

Deno.test("VESTIBULE_WORKSPACE_TOOLS is all by default, or gateway; nothing else", async () => {
  assert.equal(resolveConfig({}).workspaceTools, "all");
  assert.equal(resolveConfig({ VESTIBULE_WORKSPACE_TOOLS: "gateway" }).workspaceTools, "gateway");
  assert.equal(resolveConfig({}, ["--workspace-tools=gateway"]).workspaceTools, "gateway");
  assert.throws(
    () => resolveConfig({ VESTIBULE_WORKSPACE_TOOLS: "none" }),
    new ConfigError('VESTIBULE_WORKSPACE_TOOLS="none": must be all or gateway'),
  );
  const doc = await Deno.readTextFile(new URL("../../../docs/configuration.md", import.meta.url));
  assert.match(doc, /\| `VESTIBULE_WORKSPACE_TOOLS` +\| `--workspace-tools` +\| `all` +\|/);
});
