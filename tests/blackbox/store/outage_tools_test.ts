// Every workspace tool called while the PostgreSQL store fails it (issue 40, point 3): first with
// its writes held by a stuck transaction's lock (reads answer, writes miss their deadline), then
// with the database stopped. Each tool that meets the outage answers as the endpoint does (HTTP
// 503, Retry-After, JSON-RPC -32000 for the call's id), never as a tool error (`isError`) that
// tells the agent its call failed for good. The lists of answers are printed.
import assert from "node:assert/strict";
import postgres from "postgres";
import { SCOPE_MEANINGS } from "../../../src/oauth/scopes.ts";
import { startPgCluster } from "../../../testkit/pg_cluster.ts";
import { PROTOCOL_VERSION, startWorkspaceServer } from "../support/workspace_support.ts";

interface JsonSchema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly minLength?: number;
  readonly minimum?: number;
  readonly format?: string;
  readonly anyOf?: readonly JsonSchema[];
}

/** The smallest arguments a tool's input schema accepts: only what it requires. */
function sample(schema: JsonSchema): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  if (schema.anyOf !== undefined) return sample(schema.anyOf[0]!);
  switch (schema.type) {
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((name) => [name, sample(schema.properties![name]!)]),
      );
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items ?? {}));
    case "integer":
    case "number":
      return Math.max(schema.minimum ?? 1, 1);
    case "boolean":
      return false;
    case "string":
      if (schema.format === "uri") return "https://example.com/";
      if (schema.format === "email") return "someone@example.com";
      return "x".repeat(Math.max(schema.minLength ?? 1, 8));
    default:
      return null;
  }
}

const OUTAGE = "503 -32000";

/** The store's deadline here: a write held by the lock is told 503 after it. */
const DEADLINE_MS = 1_000;

Deno.test("every workspace tool meeting a store outage answers 503, never a tool error", async (t) => {
  const cluster = await startPgCluster();
  // A clock that stands still: the bearer check's decisions and the signing keys stay cached, so
  // each call reaches its tool and meets the outage there.
  const clock = Date.now();
  const now = () => clock;
  const url = await cluster.database();
  const ws = await startWorkspaceServer({ VESTIBULE_DATA_TIMEOUT: `${DEADLINE_MS / 1000}` }, {
    now,
    dataUrl: url,
  });
  let id = 0;
  // Given up on well past any deadline: a call held until the lock goes fails here.
  const post = (message: Record<string, unknown>) =>
    fetch(`${ws.server.apiUrl}/api/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Authorization": `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, ...message }),
      signal: AbortSignal.timeout(DEADLINE_MS + 20_000),
    });
  const { token } = await ws.token(Object.keys(SCOPE_MEANINGS));
  const tools: { name: string; inputSchema: JsonSchema }[] = [];
  try {
    let cursor: string | undefined;
    do {
      const listed = await post({ method: "tools/list", params: cursor ? { cursor } : {} });
      assert.equal(listed.status, 200);
      const { result } = await listed.json();
      tools.push(...result.tools);
      cursor = result.nextCursor;
    } while (cursor !== undefined);
    assert.ok(tools.some((tool) => tool.name === "send_test_notification"));
    // With the store up: what each tool answers to these arguments. Some refuse them (an id
    // that names nothing, a change that changes nothing); under an outage a tool may answer the
    // same refusal only when it needed no store to decide it.
    const healthy = await walk();
    assert.equal(healthy.get("send_test_notification"), "result");
    const alike = (answers: Map<string, string>) => {
      const listed = [...answers].map(([name, answer]) => `${name}: ${answer}`).join("\n");
      console.log(listed);
      for (const [name, answer] of answers) {
        assert.ok(answer === OUTAGE || answer === healthy.get(name), `${name}: ${answer}`);
      }
      return listed;
    };

    await t.step("writes held by a stuck transaction's lock", async () => {
      const holder = postgres(url, { max: 1, onnotice: () => {} });
      let release = () => {};
      const released = new Promise<void>((resolve) => release = resolve);
      let locked = () => {};
      const taken = new Promise<void>((resolve) => locked = resolve);
      const holding = holder.begin(async (tx) => {
        await tx`LOCK TABLE vestibule_records IN SHARE MODE`;
        locked();
        await released;
      });
      try {
        await taken;
        const answers = await walk();
        const listed = alike(answers);
        assert.equal(answers.get("send_test_notification"), OUTAGE, listed);
        assert.equal(answers.get("rename_business"), OUTAGE, listed);
      } finally {
        release();
        await holding;
        await holder.end();
      }
    });

    await t.step("the database stopped", async () => {
      await cluster.halt();
      const answers = await walk();
      const listed = alike(answers);
      // Only refusals of the arguments themselves are not 503.
      const other = [...answers.values()].filter((answer) => answer !== OUTAGE);
      assert.ok(other.every((answer) => answer.startsWith("tool error: ")), listed);
    });
  } finally {
    await ws.close();
    await cluster.stop();
  }

  /** Calls every tool once with the smallest arguments it takes: each one's answer. */
  async function walk(): Promise<Map<string, string>> {
    const answers = new Map<string, string>();
    for (const tool of tools) {
      const response = await post({
        method: "tools/call",
        params: { name: tool.name, arguments: sample(tool.inputSchema) },
      });
      const message = await response.json();
      if (response.status === 503) {
        assert.equal(response.headers.get("Retry-After"), "5", tool.name);
        assert.deepEqual([message.id, message.error?.code], [id, -32000], tool.name);
        answers.set(tool.name, OUTAGE);
      } else {
        assert.equal(response.status, 200, tool.name);
        assert.equal(message.error, undefined, `${tool.name}: ${JSON.stringify(message.error)}`);
        answers.set(
          tool.name,
          message.result.isError ? `tool error: ${message.result.content[0].text}` : "result",
        );
      }
    }
    return answers;
  }
});
