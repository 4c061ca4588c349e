// The span of one MCP request, as OpenTelemetry's semantic conventions for MCP name and attribute
// it (gen-ai/mcp.md): `{mcp.method.name} {target}`, SERVER, a child of the HTTP request's span or
// of the trace context the request carries in `params._meta` (2026-07-28). Tool arguments and
// results are data: never attributes.
import type { SpanAttributes, SpanOptions, TraceCarrier } from "../tracing/tracing.ts";
import type { JsonRpcRequest } from "./messages.ts";
import { isModern, type ProtocolVersion } from "./versions.ts";

/** A tool name as a span may carry it: a name, never free text an agent sent instead. */
const TOOL_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

export function mcpRequestSpan(
  request: JsonRpcRequest,
  version: ProtocolVersion,
  headers: Headers,
): { name: string; options: SpanOptions } {
  const { method } = request;
  const params = request.params;
  const toolName = method === "tools/call" && typeof params?.["name"] === "string" &&
      TOOL_NAME.test(params["name"])
    ? params["name"]
    : undefined;
  const attributes: SpanAttributes = {
    "mcp.method.name": method,
    "jsonrpc.request.id": String(request.id),
    "mcp.protocol.version": version,
    "mcp.session.id": headers.get("Mcp-Session-Id") ?? undefined,
    "network.transport": "tcp",
    "network.protocol.name": "http",
    "gen_ai.tool.name": toolName,
    "gen_ai.operation.name": method === "tools/call" ? "execute_tool" : undefined,
  };
  return {
    name: toolName === undefined ? method : `${method} ${toolName}`,
    options: { kind: "server", attributes, parent: metaCarrier(request, version) },
  };
}

/** The trace context a 2026-07-28 request carries in `params._meta`, if any. */
export function metaCarrier(
  request: JsonRpcRequest,
  version: ProtocolVersion,
): TraceCarrier | undefined {
  if (!isModern(version)) return undefined;
  const meta = request.params?.["_meta"];
  if (typeof meta !== "object" || meta === null) return undefined;
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== "string") return undefined;
  return { traceparent, tracestate: typeof tracestate === "string" ? tracestate : undefined };
}
