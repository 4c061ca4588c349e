// Wire shapes of MCP over JSON-RPC 2.0 (spec §2 "MCP messages"; the MCP 2025-11-25 and
// 2026-07-28 schemas: what 2026-07-28 adds is marked so, everything else is common).
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
  description: v.optional(v.string()),
});

// ---- 2026-07-28: per-request metadata (MCP 2026-07-28 "General fields: _meta") ----

/** The reserved `_meta` keys this server reads or writes. */
export const META = Object.freeze(
  {
    protocolVersion: "io.modelcontextprotocol/protocolVersion",
    clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
    clientInfo: "io.modelcontextprotocol/clientInfo",
    logLevel: "io.modelcontextprotocol/logLevel",
    serverInfo: "io.modelcontextprotocol/serverInfo",
  } as const,
);

const LOGGING_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const;

/**
 * A JSON object (valibot's object schemas also accept arrays); `{ type: "object" }` in OpenAPI.
 * Its message is in valibot's default form, so that issue_words.ts puts it in plain words.
 */
export const JsonObjectSchema = v.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  (issue) => `Invalid type: Expected Object but received ${issue.received}`,
);

/**
 * A 2026-07-28 request's `_meta`: protocol version and client capabilities are required,
 * client info is a SHOULD (and must be an Implementation when sent).
 */
export const ModernRequestMetaSchema = v.looseObject({
  progressToken: v.optional(ProgressTokenSchema),
  [META.protocolVersion]: v.string(),
  [META.clientCapabilities]: JsonObjectSchema,
  [META.clientInfo]: v.optional(ImplementationSchema),
  [META.logLevel]: v.optional(v.picklist(LOGGING_LEVELS)),
});

/** Result `_meta` (2026-07-28): the server names itself in every result. */
const ResultMetaSchema = v.looseObject({
  [META.serverInfo]: v.optional(ImplementationSchema),
});

/** 2026-07-28 "Caching": how long a result stays fresh, and who may share it. */
export type CacheScope = "public" | "private";

const TTL_MS = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(0),
  v.description("2026-07-28: how long, in milliseconds, the result may be considered fresh."),
);
const CACHE_SCOPE = v.pipe(
  v.picklist(["public", "private"]),
  v.description(
    "2026-07-28: `public` (any cache may share it) or `private` (one authorization context).",
  ),
);
const RESULT_TYPE = v.pipe(
  v.literal("complete"),
  v.description("2026-07-28: every result says its type; absent in 2025 answers."),
);
const RESULT_META = v.pipe(
  ResultMetaSchema,
  v.description("2026-07-28: `io.modelcontextprotocol/serverInfo` names the server."),
);

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

const ServerCapabilitiesSchema = v.object({
  tools: v.optional(v.object({ listChanged: v.optional(v.boolean()) })),
  /** 2025-11-25: tasks (src/mcp/tasks.ts). */
  tasks: v.optional(v.record(v.string(), v.unknown())),
  /** 2026-07-28: the extensions the server supports, by identifier. */
  extensions: v.optional(v.record(v.string(), v.record(v.string(), v.unknown()))),
});

export const InitializeResultSchema = v.object({
  protocolVersion: v.string(),
  capabilities: ServerCapabilitiesSchema,
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
  /** 2025-11-25: whether a call may be answered with a task (absent: it may not). */
  execution: v.optional(v.object({
    taskSupport: v.optional(v.picklist(["forbidden", "optional", "required"])),
  })),
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

/** The same request in 2026-07-28: `params._meta` is required (OpenAPI only). */
export const ModernListToolsRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("tools/list"),
  params: v.object({
    cursor: v.optional(v.string()),
    _meta: ModernRequestMetaSchema,
  }),
});

export const ListToolsResultSchema = v.object({
  resultType: v.optional(RESULT_TYPE),
  tools: v.array(ToolSchema),
  nextCursor: v.optional(v.string()),
  ttlMs: v.optional(TTL_MS),
  cacheScope: v.optional(CACHE_SCOPE),
  _meta: v.optional(RESULT_META),
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
  resultType: v.optional(RESULT_TYPE),
  content: v.array(TextContentSchema),
  structuredContent: v.optional(v.record(v.string(), v.unknown())),
  isError: v.optional(v.boolean()),
  _meta: v.optional(RESULT_META),
});
export type CallToolResult = v.InferOutput<typeof CallToolResultSchema>;

// ---- 2026-07-28: server/discover ----

export const DiscoverRequestSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: v.literal("server/discover"),
  params: v.object({ _meta: ModernRequestMetaSchema }),
});

export const DiscoverResultSchema = v.object({
  resultType: RESULT_TYPE,
  supportedVersions: v.array(v.string()),
  capabilities: ServerCapabilitiesSchema,
  instructions: v.optional(v.string()),
  ttlMs: TTL_MS,
  cacheScope: CACHE_SCOPE,
  _meta: v.optional(RESULT_META),
});
export type DiscoverResult = v.InferOutput<typeof DiscoverResultSchema>;

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

/** A progress notification for the caller's token (MCP "Progress"). */
export function progressNotification(
  progressToken: ProgressToken,
  progress: number,
  total: number | undefined,
  message: string | undefined,
): ProgressNotification {
  return {
    jsonrpc: "2.0",
    method: "notifications/progress",
    params: {
      progressToken,
      progress,
      ...(total === undefined ? {} : { total }),
      ...(message === undefined ? {} : { message }),
    },
  };
}
