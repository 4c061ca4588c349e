// Shared set-up of the gateway's black-box tests: a workspace server reading an upstreams file,
// tool listing and SSE reading over the wire, polling with a deadline, the audit log as stored,
// and a small hostile upstream whose every answer the test writes by hand.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { createAuditLog } from "../../../src/workspace/domain/audit.ts";
import type { AuditEntry } from "../../../src/workspace/domain/audit.ts";
import { createSseDecoder } from "../../../src/mcp/sse.ts";
import { listEveryTool, toolsList } from "../../mcp/wire.ts";
import type { TestServerOptions } from "./harness.ts";
import { startWorkspaceServer, type WorkspaceServer } from "./workspace_support.ts";
import type { TinyTool } from "../../../testkit/tiny_upstream_tools.ts";

export interface GatewayServer extends WorkspaceServer {
  /** Every tool the token's caller is listed, across pages. */
  tools(token: string): Promise<Record<string, any>[]>;
  /** Their names. */
  toolNames(token: string): Promise<string[]>;
  /** The business's audit entries, newest first. */
  audit(): Promise<AuditEntry[]>;
}

/** A temporary upstreams file (VESTIBULE_UPSTREAMS) holding `upstreams`; its path. */
export async function writeUpstreamsFile(
  upstreams: readonly Record<string, unknown>[],
): Promise<string> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify({ upstreams }));
  return file;
}

/** A workspace server whose VESTIBULE_UPSTREAMS is a temporary file holding `upstreams`. */
export async function startGatewayServer(
  upstreams: readonly Record<string, unknown>[],
  env: Record<string, string> = {},
  options: TestServerOptions = {},
): Promise<GatewayServer> {
  const file = await writeUpstreamsFile(upstreams);
  const ws = await startWorkspaceServer({ VESTIBULE_UPSTREAMS: file, ...env }, options);
  const log = createAuditLog(ws.server.store, options.now ?? Date.now);
  let id = 1000;
  const tools = async (token: string) =>
    (await listEveryTool(async (cursor) => {
      const response = await ws.post(token, toolsList(cursor, ++id));
      return (await response.json()).result;
    })).tools;
  return {
    ...ws,
    tools,
    toolNames: async (token) => (await tools(token)).map((tool) => tool.name as string),
    audit: () => log.list(ws.businessId),
    async close() {
      await ws.close();
      await Deno.remove(file);
    },
  };
}

type Falsy = false | null | undefined;

/** Polls `probe` until it returns something truthy, or fails naming `what` at the deadline. */
export async function until<T>(
  what: string,
  probe: () => T | Falsy | Promise<T | Falsy>,
  deadlineMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * `promise`, or nothing after `ms`: waits for what a fixed server does at once (a connection it
 * closes) without hanging the test when it does not; never itself an assertion.
 */
export async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise((resolve) => timer = setTimeout(resolve, ms))]);
  clearTimeout(timer);
}

/** The JSON-RPC messages of an event-stream answer, each as it arrives. */
export async function* sseMessages(response: Response): AsyncGenerator<Record<string, any>> {
  const events = response.body!
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(createSseDecoder())
    .getReader();
  try {
    for (;;) {
      const { done, value } = await events.read();
      if (done) return;
      if (value !== "") yield JSON.parse(value);
    }
  } finally {
    events.releaseLock();
  }
}

/** A tools/call request with a progress token (the answer is then an event stream). */
export function callWithProgress(id: number, name: string, args: Record<string, unknown>) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args, _meta: { progressToken: `p-${id}` } },
  };
}

/** What the hostile upstream's tools/call answers: an HTTP response built by the test. */
export type HostileAnswer = (id: number | string, name: string) => Response | Promise<Response>;

export interface HostileUpstream {
  readonly url: string;
  /** JSON-RPC responses the client POSTed back (to requests the upstream sent it). */
  readonly responses: readonly Record<string, any>[];
  /** JSON-RPC notifications the client sent it (notifications/cancelled …). */
  readonly notifications: readonly Record<string, any>[];
  close(): Promise<void>;
}

/**
 * A legacy (2025-11-25) Streamable HTTP MCP server by hand, with no session: it lists `tools`
 * exactly as given (duplicates, odd schemas and all) and answers each tools/call with what
 * `answer` builds, however wrong that is.
 */
export function startHostileUpstream(
  tools: readonly Record<string, unknown>[],
  answer: HostileAnswer,
): HostileUpstream {
  const responses: Record<string, any>[] = [];
  const notifications: Record<string, any>[] = [];
  const json = (id: unknown, body: Record<string, unknown>) =>
    Response.json({ jsonrpc: "2.0", id, ...body });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST") return new Response(null, { status: 405 });
    const message = await req.json();
    if (message.method === undefined) {
      responses.push(message);
      return new Response(null, { status: 202 });
    }
    if (message.id === undefined) {
      notifications.push(message);
      return new Response(null, { status: 202 });
    }
    switch (message.method) {
      case "initialize":
        return json(message.id, {
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "hostile", version: "1" },
          },
        });
      case "tools/list":
        return json(message.id, { result: { tools } });
      case "tools/call":
        return await answer(message.id, message.params.name);
      default:
        return json(message.id, { error: { code: -32601, message: "Method not found" } });
    }
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    responses,
    notifications,
    close: () => server.shutdown(),
  };
}

/** One SSE event carrying `message`. */
export function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * `tools/call` straight to a Streamable HTTP upstream, in a session of its own, with no gateway
 * in between: the baseline a forwarded result must equal.
 */
export async function directCall(
  url: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, any>> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
  };
  const post = async (message: Record<string, unknown>) => {
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(message) });
    if (response.status === 202) return null;
    const type = response.headers.get("Content-Type") ?? "";
    if (type.startsWith("application/json")) return { response, message: await response.json() };
    // Read to the end: server-everything primes its stream with an event without data.
    const messages: Record<string, any>[] = [];
    for await (const message of sseMessages(response)) messages.push(message);
    return { response, message: messages.at(-1)! };
  };
  const opened = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "direct", version: "1" },
    },
  });
  headers["Mcp-Session-Id"] = opened!.response.headers.get("Mcp-Session-Id")!;
  headers["MCP-Protocol-Version"] = opened!.message.result.protocolVersion;
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  const called = await post({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name, arguments: args },
  });
  await fetch(url, { method: "DELETE", headers }).then((r) => r.body?.cancel());
  return called!.message.result;
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

/** A tool with an object input that answers its own name: what listing tests need by the many. */
export function namedTool(name: string, description = `Tool ${name}.`): TinyTool {
  return {
    definition: { name, description, inputSchema: { type: "object" } },
    handler: () => ({ content: [{ type: "text", text: name }] }),
  };
}
