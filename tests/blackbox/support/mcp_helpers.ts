// Helpers for the MCP black-box tests: JSON-RPC over fetch, SSE parsing, raw HTTP/1.1.
// deno-lint-ignore-file no-explicit-any -- messages are arbitrary JSON the tests pick apart
import assert from "node:assert/strict";
import { parseSse } from "../../mcp/wire.ts";
import { startTestServer, type TestServer } from "./harness.ts";

export const MCP_HEADERS = Object.freeze({
  "Content-Type": "application/json",
  "Accept": "application/json, text/event-stream",
});

export const INITIALIZE = Object.freeze({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bb", version: "1" },
  },
});

/** The `_meta` every MCP 2026-07-28 request carries. */
export const MODERN_META = Object.freeze({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "bb", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
});

/** A 2026-07-28 request: its `_meta` in the body, its version, method and name in headers. */
export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  id: string | number = 1,
): { body: Record<string, unknown>; headers: Record<string, string> } {
  const name = params["name"];
  return {
    body: { jsonrpc: "2.0", id, method, params: { ...params, _meta: MODERN_META } },
    headers: {
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": method,
      ...(typeof name === "string" ? { "Mcp-Name": name } : {}),
    },
  };
}

export function mcpPost(
  url: string,
  body: unknown,
  headers: Record<string, string> = { "MCP-Protocol-Version": "2025-11-25" },
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Reads a JSON or SSE answer into the JSON-RPC messages it carries. */
export async function readMessages(response: Response): Promise<Record<string, any>[]> {
  const type = response.headers.get("Content-Type") ?? "";
  if (type.startsWith("application/json")) return [await response.json()];
  assert.equal(type, "text/event-stream");
  return parseSse(await response.text());
}

/** One response message: asserts there is exactly one. */
export async function rpc(
  url: string,
  body: unknown,
  headers?: Record<string, string>,
): Promise<Record<string, any>> {
  const response = await mcpPost(url, body, headers);
  assert.equal(response.status, 200);
  const messages = await readMessages(response);
  assert.equal(messages.length, 1);
  return messages[0]!;
}

/** Runs `fn` against a fresh server and its onboarding endpoint ({auth_url}/mcp), then closes it. */
export async function withServer(
  env: Record<string, string>,
  fn: (server: TestServer, mcp: string) => Promise<void>,
): Promise<void> {
  const server = await startTestServer(env);
  try {
    await fn(server, `${server.authUrl}/mcp`);
  } finally {
    await server.close();
  }
}

/**
 * Sends raw bytes over HTTP/1.1 and reads one response (Content-Length framed), so tests see
 * what a fetch client hides: that the answer comes before the request body is finished, or
 * what a request cut short gets (`closeWrite`: the client stops sending, mid-body if the
 * parts say so, and only listens).
 */
export async function rawExchange(
  url: string,
  parts: readonly (string | Uint8Array)[],
  options: { readonly deadlineMs?: number; readonly closeWrite?: boolean } = {},
): Promise<string> {
  const { deadlineMs = 5000, closeWrite = false } = options;
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let text = "";
  const complete = () => {
    const end = text.indexOf("\r\n\r\n");
    if (end === -1) return false;
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
    return length !== null && text.length >= end + 4 + Number(length[1]);
  };
  const reading = (async () => {
    const buffer = new Uint8Array(16 * 1024);
    while (!complete()) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) return;
      text += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, deadlineMs);
  });
  for (const part of parts) {
    // The server may answer before it has read everything we send; that is what we test.
    await conn.write(typeof part === "string" ? encoder.encode(part) : part).catch(() => 0);
  }
  if (closeWrite) await conn.closeWrite();
  await Promise.race([reading, deadline]);
  clearTimeout(timer);
  conn.close();
  await reading;
  return text;
}
