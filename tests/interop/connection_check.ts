// What an agent does first on the workspace, with either SDK's client: the connection test,
// followed by nextAction until it says done.
import assert from "node:assert/strict";

interface ToolResult {
  readonly isError?: unknown;
  readonly structuredContent?: unknown;
}

type CallTool = (
  request: { name: string; arguments: Record<string, unknown> },
) => Promise<ToolResult>;

export async function runConnectionTest(callTool: CallTool): Promise<void> {
  const setup = await callTool({ name: "get_agent_connection_setup", arguments: {} });
  assert.notEqual(setup.isError, true, JSON.stringify(setup));
  const next = (setup.structuredContent as { nextAction: Record<string, unknown> }).nextAction;
  assert.equal(next.type, "call_tool");
  const verified = await callTool({
    name: next.tool as string,
    arguments: next.arguments as Record<string, unknown>,
  });
  assert.notEqual(verified.isError, true, JSON.stringify(verified));
  const content = verified.structuredContent as { status: string; nextAction: unknown };
  assert.equal(content.status, "verified");
  assert.deepEqual(content.nextAction, { type: "done" });
}
