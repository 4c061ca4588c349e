// Wire shapes of MCP over JSON-RPC 2.0 (spec §2 "MCP messages"; MCP 2025-11-25 schema).
// Parsed at the edge by the dispatcher, and the source of the OpenAPI description of
// tool discovery: keep the exported names stable.
import * as v from "valibot";

export const JSONRPC_VERSION = "2.0";

/**
 * MCP forbids a null id on requests; responses may carry null when the id was unreadable.
 * Integer first: clients mostly number their requests, and a failed branch costs an issue.
 */
export const RequestIdSchema = v.union([v.pipe(v.number(), v.integer()), v.string()]);
export type RequestId = v.InferOutput<typeof RequestIdSchema>;

export const ProgressTokenSchema = v.union([v.pipe(v.number(), v.integer()), v.string()]);
export type ProgressToken = v.InferOutput<typeof ProgressTokenSchema>;

/** Request `_meta`: MCP lets the client ask for progress notifications here. */
export const RequestMetaSchema = v.looseObject({
  progressToken: v.optional(ProgressTokenSchema),
});

/** MCP params are always an object (JSON-RPC would allow an array; MCP does not). */
export const ParamsSchema = v.looseObject({ _meta: v.optional(RequestMetaSchema) });

export const JsonRpcRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.string(),
  params: v.optional(ParamsSchema),
});
export type JsonRpcRequest = v.InferOutput<typeof JsonRpcRequestSchema>;

export const JsonRpcNotificationSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  method: v.string(),
  params: v.optional(ParamsSchema),
});
export type JsonRpcNotification = v.InferOutput<typeof JsonRpcNotificationSchema>;

export const ErrorObjectSchema = v.object({
  code: v.pipe(v.number(), v.integer()),
  message: v.string(),
  data: v.optional(v.unknown()),
});

/** A JSON-RPC error response (spec §2 RpcError). */
export const RpcErrorSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: v.nullable(RequestIdSchema),
  error: ErrorObjectSchema,
});
export type RpcError = v.InferOutput<typeof RpcErrorSchema>;

/** A JSON-RPC success response with any result. */
export const JsonRpcResultResponseSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  result: v.record(v.string(), v.unknown()),
});
export type JsonRpcResultResponse = v.InferOutput<typeof JsonRpcResultResponseSchema>;

/** A response the client posts to us (we never send requests, so these are only accepted). */
export const JsonRpcResponseSchema = v.union([JsonRpcResultResponseSchema, RpcErrorSchema]);

const ImplementationSchema = v.looseObject({
  name: v.string(),
  version: v.string(),
  title: v.optional(v.string()),
});

// ---- initialize ----

export const InitializeParamsSchema = v.looseObject({
  protocolVersion: v.string(),
  capabilities: v.looseObject({}),
  clientInfo: ImplementationSchema,
  _meta: v.optional(RequestMetaSchema),
});
export type InitializeParams = v.InferOutput<typeof InitializeParamsSchema>;

export const InitializeRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("initialize"),
  params: InitializeParamsSchema,
});
export type InitializeRequest = v.InferOutput<typeof InitializeRequestSchema>;

export const InitializeResultSchema = v.object({
  protocolVersion: v.string(),
  capabilities: v.object({
    tools: v.optional(v.object({ listChanged: v.optional(v.boolean()) })),
  }),
  serverInfo: ImplementationSchema,
  instructions: v.optional(v.string()),
});
export type InitializeResult = v.InferOutput<typeof InitializeResultSchema>;

export const InitializedNotificationSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  method: v.literal("notifications/initialized"),
  params: v.optional(ParamsSchema),
});

export const PingRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("ping"),
  params: v.optional(ParamsSchema),
});

// ---- tools/list ----

export const ToolAnnotationsSchema = v.object({
  title: v.optional(v.string()),
  readOnlyHint: v.optional(v.boolean()),
  destructiveHint: v.optional(v.boolean()),
  idempotentHint: v.optional(v.boolean()),
  openWorldHint: v.optional(v.boolean()),
});

/** A JSON Schema of an object; extra keys allowed (spec §2 Tool). */
export const ObjectJsonSchemaSchema = v.looseObject({
  type: v.literal("object"),
  properties: v.optional(v.record(v.string(), v.unknown())),
  required: v.optional(v.array(v.string())),
});

export const ToolSchema = v.object({
  name: v.string(),
  title: v.optional(v.string()),
  description: v.optional(v.string()),
  inputSchema: ObjectJsonSchemaSchema,
  outputSchema: v.optional(ObjectJsonSchemaSchema),
  annotations: v.optional(ToolAnnotationsSchema),
  _meta: v.optional(v.record(v.string(), v.unknown())),
});
export type ToolDescription = v.InferOutput<typeof ToolSchema>;

export const ListToolsParamsSchema = v.looseObject({
  cursor: v.optional(v.string()),
  _meta: v.optional(RequestMetaSchema),
});

export const ListToolsRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("tools/list"),
  params: v.optional(ListToolsParamsSchema),
});
export type ListToolsRequest = v.InferOutput<typeof ListToolsRequestSchema>;

export const ListToolsResultSchema = v.object({
  tools: v.array(ToolSchema),
  nextCursor: v.optional(v.string()),
});
export type ListToolsResult = v.InferOutput<typeof ListToolsResultSchema>;

export const ListToolsResponseSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  result: ListToolsResultSchema,
});
export type ListToolsResponse = v.InferOutput<typeof ListToolsResponseSchema>;

// ---- tools/call ----

export const CallToolParamsSchema = v.looseObject({
  name: v.string(),
  arguments: v.optional(v.record(v.string(), v.unknown())),
  _meta: v.optional(RequestMetaSchema),
});

export type CallToolParams = v.InferOutput<typeof CallToolParamsSchema>;

export const CallToolRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("tools/call"),
  params: CallToolParamsSchema,
});
export type CallToolRequest = v.InferOutput<typeof CallToolRequestSchema>;

export const TextContentSchema = v.object({ type: v.literal("text"), text: v.string() });

export const CallToolResultSchema = v.object({
  content: v.array(TextContentSchema),
  structuredContent: v.optional(v.record(v.string(), v.unknown())),
  isError: v.optional(v.boolean()),
});
export type CallToolResult = v.InferOutput<typeof CallToolResultSchema>;

// ---- server -> client notifications ----

export const ProgressNotificationSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  method: v.literal("notifications/progress"),
  params: v.object({
    progressToken: ProgressTokenSchema,
    progress: v.number(),
    total: v.optional(v.number()),
    message: v.optional(v.string()),
  }),
});
export type ProgressNotification = v.InferOutput<typeof ProgressNotificationSchema>;

/** Anything the server writes: a response or a notification. */
export type JsonRpcMessage =
  | JsonRpcResultResponse
  | RpcError
  | ProgressNotification;
