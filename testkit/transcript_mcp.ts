// The MCP sections of the behaviour transcript (testkit/transcript.ts): both endpoints spoken to
// in every version, with bad bodies and headers, and every tool called with no arguments and with
// arguments made from its input schema.
import type { Recorder } from "./transcript_recorder.ts";

const VERSIONS = ["2025-06-18", "2025-11-25", "2026-07-28"];
const BAD_BODIES: unknown[] = [
  "{",
  "[]",
  "null",
  "1",
  '{"jsonrpc":"2.0"}',
  { jsonrpc: "1.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "nope" },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  [{ jsonrpc: "2.0", id: 1, method: "ping" }],
  { jsonrpc: "2.0", id: null, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "nope" } },
  { jsonrpc: "2.0", id: 1, method: "tools/list", params: { cursor: "bogus" } },
  { jsonrpc: "2.0", id: 1, method: "resources/list" },
];
const BAD_HEADERS: Record<string, string>[] = [
  { Accept: "application/json" },
  { Accept: "text/event-stream" },
  { "Content-Type": "text/plain" },
  { "MCP-Protocol-Version": "1999-01-01" },
  { Origin: "https://evil.example" },
  { Origin: "https://console.example.com" },
  { Accept: "*/*" },
];

/** The onboarding endpoint (no token): every version, bad bodies and headers, every tool. */
export async function recordOnboarding(rec: Recorder, onboarding: string): Promise<void> {
  for (const version of VERSIONS) {
    await rec.mcp(`init ${version}`, onboarding, initialize(version), {
      "MCP-Protocol-Version": version,
    });
    await rec.mcp(`list ${version}`, onboarding, { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      "MCP-Protocol-Version": version,
    });
  }
  for (const body of BAD_BODIES) await rec.mcp(`onboarding bad`, onboarding, body);
  for (const headers of BAD_HEADERS) {
    await rec.mcp(`onboarding headers ${JSON.stringify(headers)}`, onboarding, {
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
    }, headers);
  }
  await callEvery(rec, onboarding, {});
}

/** The workspace endpoint, with `bearer` and without: each version, bad bodies, each tool twice. */
export async function recordWorkspace(
  rec: Recorder,
  workspace: string,
  bearer: Record<string, string>,
): Promise<void> {
  for (const h of [{}, { Authorization: "Bearer nope" }, { Authorization: "Basic x" }, bearer]) {
    await rec.mcp("workspace auth", workspace, { jsonrpc: "2.0", id: 1, method: "ping" }, h);
  }
  for (const version of VERSIONS) {
    await rec.mcp(`ws init ${version}`, workspace, initialize(version), {
      ...bearer,
      "MCP-Protocol-Version": version,
    });
  }
  for (const body of BAD_BODIES) await rec.mcp(`workspace bad`, workspace, body, bearer);
  await callEvery(rec, workspace, bearer);
  await callEvery(rec, workspace, bearer);
}

function initialize(version: string) {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
}

type Tool = {
  name: string;
  inputSchema: { properties?: Record<string, Schema>; required?: string[] };
};
type Schema = {
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
};
const sample = (s: Schema): unknown =>
  s.enum
    ? s.enum[0]
    : s.type === "string"
    ? (s.format === "email" ? "someone@example.com" : "demo")
    : s.type === "number" || s.type === "integer"
    ? (s.minimum ?? 1)
    : s.type === "boolean"
    ? true
    : s.type === "array"
    ? []
    : s.type === "object"
    ? Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, sample(v)]))
    : "demo";

async function allTools(
  rec: Recorder,
  url: string,
  extra: Record<string, string>,
): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const r = await rec.mcp("list page", url, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/list",
      ...(cursor ? { params: { cursor } } : {}),
    }, extra);
    if (r.status !== 200) throw new Error(`tools/list ${r.status}: ${r.text}`);
    const json = JSON.parse(r.text);
    tools.push(...json.result.tools);
    cursor = json.result.nextCursor;
  } while (cursor);
  return tools;
}

async function callEvery(rec: Recorder, url: string, extra: Record<string, string>) {
  for (const tool of await allTools(rec, url, extra)) {
    await rec.mcp(`call ${tool.name} {}`, url, {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: tool.name, arguments: {} },
    }, extra);
    const args = Object.fromEntries(
      Object.entries(tool.inputSchema.properties ?? {}).map(([k, v]) => [k, sample(v)]),
    );
    await rec.mcp(`call ${tool.name} sample`, url, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: tool.name, arguments: args },
    }, extra);
    await rec.mcp(`call ${tool.name} sse`, url, {
      jsonrpc: "2.0",
      id: 6,
      method: "tools/call",
      params: { name: tool.name, arguments: args, _meta: { progressToken: "p1" } },
    }, extra);
  }
}
