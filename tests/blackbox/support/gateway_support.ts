// Shared by the gateway's black-box tests: the upstreams file, the caller's listing of
// upstream tools, and polling for what another part (a listing, a replica) does in its time.
// deno-lint-ignore-file no-explicit-any -- MCP messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import type { WorkspaceServer } from "./workspace_support.ts";

const DEADLINE_MS = 10_000;

/** Polls `probe` until it returns something other than undefined, or fails after a deadline. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The tools of the upstream `prefix` that `token` is listed (every page), by name; a walk whose
 * cursor expired because the list changed meanwhile starts again, as the error says to.
 */
export async function listed(
  ws: Pick<WorkspaceServer, "post">,
  token: string,
  prefix = "tiny__",
): Promise<Map<string, any>> {
  for (let walks = 0; walks < 5; walks++) {
    const tools = new Map<string, any>();
    let cursor: string | undefined;
    do {
      const response = await ws.post(token, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: cursor === undefined ? {} : { cursor },
      });
      assert.equal(response.status, 200);
      const message = await response.json();
      if (cursor !== undefined && message.error?.message.includes("list again")) break;
      assert.ok(message.result, JSON.stringify(message));
      for (const tool of message.result.tools) {
        if (tool.name.startsWith(prefix)) tools.set(tool.name, tool);
      }
      cursor = message.result.nextCursor;
      if (cursor === undefined) return tools;
    } while (cursor !== undefined);
  }
  return assert.fail("the tool list kept changing");
}

export async function upstreamsFile(upstreams: unknown[]): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(path, JSON.stringify({ upstreams }));
  return path;
}
