/**
 * A small MCP server of our own whose tools answer with tasks (MCP 2025-11-25 experimental
 * tasks), for the gateway's relay tests. Each task stays `working` until the test moves it
 * (`finish`, `fail`, `askInput`, `forget`): nothing depends on time. Written by hand (no SDK),
 * JSON answers only, over Streamable HTTP. Never imported by production code.
 *
 *   const upstream = startTaskUpstream();
 *   // tools: `research` (taskSupport optional), `deep` (required), `quick` (optional, but
 *   // answers at once), `plain` (no task support)
 *   const { taskId } = upstream.tasks.at(-1)!;  upstream.finish(taskId, "the report");
 */

export interface UpstreamTaskRecord {
  readonly taskId: string;
  /** The tools/call's arguments, as sent. */
  readonly arguments: Record<string, unknown>;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  statusMessage?: string;
  result?: Record<string, unknown>;
}

export interface TaskUpstream {
  readonly url: string;
  /** Every task started, in order; a forgotten one is gone from it. */
  readonly tasks: UpstreamTaskRecord[];
  /** Every request's method, in order (tasks/get, tasks/cancel, …). */
  readonly methods: string[];
  finish(taskId: string, text: string): void;
  fail(taskId: string, text: string): void;
  /** The task waits for its caller's input (input_required). */
  askInput(taskId: string): void;
  forget(taskId: string): void;
  close(): Promise<void>;
}

const TOOLS = [
  {
    name: "research",
    description: "Researches a topic, as a task.",
    inputSchema: { type: "object", properties: { topic: { type: "string" } } },
    execution: { taskSupport: "optional" },
  },
  {
    name: "deep",
    description: "Researches deeply, only as a task.",
    inputSchema: { type: "object" },
    execution: { taskSupport: "required" },
  },
  {
    name: "quick",
    description: "Says it may be a task, but answers at once.",
    inputSchema: { type: "object" },
    execution: { taskSupport: "optional" },
  },
  { name: "plain", description: "No tasks.", inputSchema: { type: "object" } },
];
const CAPABILITIES = {
  tools: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};
const TTL_MS = 60 * 60 * 1000;
const POLL_MS = 2_000;
const TEXT = (text: string) => ({ content: [{ type: "text", text }] });

export function startTaskUpstream(): TaskUpstream {
  const tasks: UpstreamTaskRecord[] = [];
  const methods: string[] = [];
  const find = (taskId: unknown) => tasks.find((task) => task.taskId === taskId);
  const wire = (task: UpstreamTaskRecord) => ({
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUpdatedAt: "2026-01-01T00:00:00.000Z",
    ttl: TTL_MS,
    pollInterval: POLL_MS,
  });

  const answer = (method: string, params: Record<string, unknown>): object => {
    switch (method) {
      case "initialize":
        return {
          result: {
            protocolVersion: "2025-11-25",
            capabilities: CAPABILITIES,
            serverInfo: { name: "task-upstream", version: "1.0.0" },
          },
        };
      case "tools/list":
        return { result: { tools: TOOLS } };
      case "tools/call": {
        const args = (params["arguments"] ?? {}) as Record<string, unknown>;
        const tasking = params["name"] === "research" || params["name"] === "deep";
        if (tasking && params["task"] !== undefined) {
          const task: UpstreamTaskRecord = {
            taskId: `up-${tasks.length + 1}`,
            arguments: args,
            status: "working",
            statusMessage: "Reading sources",
          };
          tasks.push(task);
          return { result: { task: wire(task) } };
        }
        if (params["name"] === "plain" && params["task"] !== undefined) {
          return { error: { code: -32601, message: "plain cannot be called as a task" } };
        }
        return { result: TEXT(`${params["name"]} answered at once`) };
      }
      case "tasks/get":
      case "tasks/result":
      case "tasks/cancel": {
        const task = find(params["taskId"]);
        if (task === undefined) {
          return {
            error: {
              code: -32602,
              message: `Failed to retrieve task: no task ${params["taskId"]}`,
            },
          };
        }
        if (method === "tasks/get") return { result: wire(task) };
        if (method === "tasks/cancel") {
          if (task.status !== "working" && task.status !== "input_required") {
            return { error: { code: -32602, message: `Cannot cancel task: it is ${task.status}` } };
          }
          task.status = "cancelled";
          return { result: wire(task) };
        }
        if (task.result === undefined) {
          return { error: { code: -32602, message: "The task has no result yet" } };
        }
        return {
          result: {
            ...task.result,
            _meta: { "io.modelcontextprotocol/related-task": { taskId: task.taskId } },
          },
        };
      }
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message = await request.json();
    if (message.id === undefined) return new Response(null, { status: 202 });
    methods.push(message.method);
    const body = {
      jsonrpc: "2.0",
      id: message.id,
      ...answer(message.method, message.params ?? {}),
    };
    return new Response(JSON.stringify(body), {
      headers: { "Content-Type": "application/json", "Mcp-Session-Id": "task-upstream" },
    });
  });

  const move = (taskId: string, change: Partial<UpstreamTaskRecord>) => {
    const task = find(taskId);
    if (task === undefined) throw new Error(`no upstream task ${taskId}`);
    Object.assign(task, change);
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    tasks,
    methods,
    finish: (taskId, text) =>
      move(taskId, { status: "completed", statusMessage: "Done", result: TEXT(text) }),
    fail: (taskId, text) =>
      move(taskId, {
        status: "failed",
        statusMessage: "It broke",
        result: { ...TEXT(text), isError: true },
      }),
    askInput: (taskId) => move(taskId, { status: "input_required", statusMessage: "Which topic?" }),
    forget(taskId) {
      const at = tasks.findIndex((task) => task.taskId === taskId);
      if (at >= 0) tasks.splice(at, 1);
    },
    async close() {
      await server.shutdown();
    },
  };
}
