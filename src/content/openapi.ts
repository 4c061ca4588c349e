/**
 * The OpenAPI 3.1.1 description (spec §4, §9), built from the valibot schemas the server
 * itself parses and sends. `deno task openapi` writes it to static/openapi.json with the
 * `{base_url}`/`{auth_url}`/`{api_url}` placeholders in place; start-up fills them like every
 * other template, and a test fails when the committed file differs from this output.
 */
import * as v from "valibot";
import { toJsonSchemaDefs } from "@valibot/to-json-schema";
import {
  DiscoverRequestSchema,
  DiscoverResultSchema,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  InitializeResultSchema,
  JsonObjectSchema,
  JSONRPC_VERSION,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ModernListToolsRequestSchema,
  ModernRequestMetaSchema,
  RequestIdSchema,
  RpcErrorSchema,
  ToolSchema,
} from "../mcp/messages.ts";
import { SCOPE_MEANINGS } from "../oauth/scopes.ts";
import { OAuthErrorSchema, ProtectedResourceSchema } from "../oauth/wire_schemas.ts";
import { BlockSchema, InlineSchema, PageDocumentSchema } from "../pages/page_document.ts";
import { HealthSchema } from "./health.ts";
import {
  AI_CATALOG_PATH,
  AI_CATALOG_TYPE,
  SERVER_CARD_SCHEMA,
  SERVER_CARD_TYPE,
} from "./server_cards.ts";

/** The answer to initialize; the spec does not show it, our dispatcher sends this shape. */
const InitializeResponseSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  result: InitializeResultSchema,
});

/** The answer to server/discover (MCP 2026-07-28). */
const DiscoverResponseSchema = v.object({
  jsonrpc: v.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  result: DiscoverResultSchema,
});

const COMPONENT_SCHEMAS = {
  Health: HealthSchema,
  PageDocument: PageDocumentSchema,
  Block: BlockSchema,
  Inline: InlineSchema,
  ProtectedResource: ProtectedResourceSchema,
  OAuthError: OAuthErrorSchema,
  InitializeRequest: InitializeRequestSchema,
  InitializedNotification: InitializedNotificationSchema,
  InitializeResponse: InitializeResponseSchema,
  ListToolsRequest: ListToolsRequestSchema,
  "ListToolsRequest.2026-07-28": ModernListToolsRequestSchema,
  "RequestMeta.2026-07-28": ModernRequestMetaSchema,
  DiscoverRequest: DiscoverRequestSchema,
  DiscoverResponse: DiscoverResponseSchema,
  ListToolsResponse: ListToolsResponseSchema,
  Tool: ToolSchema,
  RpcError: RpcErrorSchema,
};

type SchemaName = keyof typeof COMPONENT_SCHEMAS;
const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });

const PUBLIC = [] as const;
const DOCUMENT_HEADERS = {
  "ETag": {
    description: "Strong validator; send it back in If-None-Match.",
    schema: { type: "string" },
  },
  "Cache-Control": { description: "`public, max-age=300`.", schema: { type: "string" } },
};
/** The discovery documents' (content/server_cards.ts): MCP Server Cards "CORS" and "Caching". */
function _discoveryHeaders(maxAge: number) {
  return {
    ...DOCUMENT_HEADERS,
    "Cache-Control": { description: `\`public, max-age=${maxAge}\`.`, schema: { type: "string" } },
    "Access-Control-Allow-Origin": { schema: { type: "string", const: "*" } },
    "Access-Control-Expose-Headers": { schema: { type: "string", const: "ETag" } },
  };
}
const SERVER_CARD_CONTENT = {
  [SERVER_CARD_TYPE]: {
    schema: {
      type: "object",
      description: `An MCP Server Card, valid against ${SERVER_CARD_SCHEMA}.`,
    },
  },
};
const NOT_MODIFIED = { description: "Not modified: the If-None-Match validator still matches." };

function _publicRead(options: {
  operationId: string;
  summary: string;
  description: string;
  content: Record<string, { schema: object }>;
  servers?: readonly object[];
  headers?: object;
}) {
  return {
    get: {
      operationId: options.operationId,
      summary: options.summary,
      description: options.description,
      ...(options.servers ? { servers: options.servers } : {}),
      security: PUBLIC,
      responses: {
        "200": {
          description: options.summary,
          headers: options.headers ?? DOCUMENT_HEADERS,
          content: options.content,
        },
        "304": NOT_MODIFIED,
      },
    },
  };
}

const MCP_RULES =
  "Send `Content-Type: application/json` and `Accept: application/json, text/event-stream`. " +
  "Initialize first (`initialize`), then send the notification `notifications/initialized` " +
  "(no `id`, answered 202), then `tools/list`; every request after `initialize` carries " +
  "`MCP-Protocol-Version` with the negotiated version (`2025-06-18` or `2025-11-25`). " +
  "Follow `result.nextCursor` while present by sending it back as `params.cursor`. " +
  "A 200 may carry a JSON-RPC error (RpcError). Tools are executed through an MCP client; " +
  "their schemas are read at runtime from `tools/list`. " +
  "MCP 2026-07-28, the version a new client should use, is served beside them, each request " +
  "in the revision it names: no `initialize`; every request carries `params._meta` " +
  "(RequestMeta.2026-07-28) and the headers `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` " +
  "and, for `tools/call`, `Mcp-Name`; `server/discover` describes the server; results carry " +
  "`resultType`, `_meta` with the server's identity, and on `tools/list` `ttlMs` and " +
  "`cacheScope`.";

const RPC_BODY = json(ref("RpcError"));

function _mcpPost(options: {
  operationId: string;
  summary: string;
  description: string;
  server: object;
  security: readonly object[];
  bodyLimit: string;
  authenticated: boolean;
}) {
  const responses: Record<string, object> = {
    "200": {
      description:
        "The JSON-RPC answer: ListToolsResponse for `tools/list`, InitializeResponse for " +
        "`initialize`, DiscoverResponse for `server/discover` (2026-07-28), or RpcError. As " +
        "`application/json`, or as `text/event-stream` whose events each carry one JSON-RPC " +
        "message in their `data` field.",
      content: {
        "application/json": {
          schema: {
            oneOf: [
              ref("ListToolsResponse"),
              ref("InitializeResponse"),
              ref("DiscoverResponse"),
              ref("RpcError"),
            ],
          },
        },
        "text/event-stream": {
          schema: {
            type: "string",
            description:
              "Server-sent events; each `data` field is one JSON-RPC message (ListToolsResponse, InitializeResponse, RpcError, or a progress notification before the answer).",
          },
        },
      },
    },
    "202": {
      description: "A notification (such as `notifications/initialized`) was accepted; empty body.",
    },
    "400": {
      description:
        "The body is not a JSON-RPC message; `MCP-Protocol-Version` missing or disagreeing with " +
        "`_meta` (-32020), or not spoken here (-32022, `data.supported` and `data.requested`); " +
        "in 2026-07-28 also `_meta` without its version or client capabilities (-32602), or " +
        "`Mcp-Method`/`Mcp-Name` missing or disagreeing with the body (-32020). The error " +
        "carries the request's `id`.",
      content: RPC_BODY,
    },
  };
  if (options.authenticated) {
    responses["401"] = {
      description:
        "Bearer token missing or invalid. `WWW-Authenticate` carries a Bearer challenge with `resource_metadata` (the protected-resource metadata URL) and `scope`; follow discovery, do not retry the same token.",
      headers: {
        "WWW-Authenticate": {
          description:
            'e.g. `Bearer resource_metadata="{api_url}/.well-known/oauth-protected-resource", scope="app.access"`.',
          required: true,
          schema: { type: "string" },
        },
      },
      content: json(ref("OAuthError")),
    };
  }
  responses["404"] = {
    description:
      "2026-07-28: a method the revision does not have (`initialize`, `ping`, any unknown one), " +
      "with -32601 and the request's `id`.",
    content: RPC_BODY,
  };
  responses["403"] = {
    description: options.authenticated
      ? 'Origin, host, membership or delegated permission rejected. A missing scope carries `WWW-Authenticate` with `error="insufficient_scope"` and the scopes needed; do not request broader access automatically.'
      : "Origin or host rejected (browser access is limited to trusted origins).",
    content: { "application/json": { schema: { oneOf: [ref("RpcError"), ref("OAuthError")] } } },
  };
  responses["406"] = {
    description: "`Accept` does not list both `application/json` and `text/event-stream`.",
    content: RPC_BODY,
  };
  responses["413"] = { description: `Request body over ${options.bodyLimit}.`, content: RPC_BODY };
  responses["415"] = {
    description: "`Content-Type` is not `application/json`.",
    content: RPC_BODY,
  };
  responses["429"] = {
    description: "Rate limited. Honor `Retry-After`; otherwise back off exponentially with jitter.",
    headers: {
      "Retry-After": {
        description: "Seconds to wait (or an HTTP date).",
        schema: { type: "string" },
      },
    },
    content: RPC_BODY,
  };
  return {
    post: {
      operationId: options.operationId,
      summary: options.summary,
      description: `${options.description} ${MCP_RULES}`,
      servers: [options.server],
      security: options.security,
      parameters: [
        {
          name: "MCP-Protocol-Version",
          in: "header",
          required: false,
          description:
            "The request's protocol version: in 2026-07-28 on every request, equal to `params._meta`'s; in the 2025 revisions the negotiated one, on every request after `initialize`, `tools/list` included.",
          schema: { type: "string", enum: ["2026-07-28", "2025-11-25", "2025-06-18"] },
        },
        {
          name: "Mcp-Method",
          in: "header",
          required: false,
          description: "2026-07-28, every request: the body's `method`.",
          schema: { type: "string", examples: ["tools/list"] },
        },
        {
          name: "Mcp-Name",
          in: "header",
          required: false,
          description:
            "2026-07-28, `tools/call`: the body's `params.name` (`=?base64?…?=` when not plain ASCII).",
          schema: { type: "string" },
        },
      ],
      requestBody: {
        required: true,
        description: `A JSON-RPC message, at most ${options.bodyLimit}.`,
        content: {
          "application/json": {
            schema: {
              oneOf: [
                ref("InitializeRequest"),
                ref("InitializedNotification"),
                ref("ListToolsRequest"),
                ref("DiscoverRequest"),
                ref("ListToolsRequest.2026-07-28"),
              ],
            },
          },
        },
      },
      responses,
    },
  };
}

function _mcpGet(operationId: string, server: object) {
  return {
    operationId,
    summary: "GET is not supported",
    description: "The endpoint is POST-only and stateless: GET is answered 405 with `Allow: POST`.",
    servers: [server],
    security: PUBLIC,
    responses: {
      "405": {
        description: "POST is required.",
        headers: { Allow: { required: true, schema: { type: "string", const: "POST" } } },
        content: RPC_BODY,
      },
    },
  };
}

const AUTH_SERVER = {
  url: "{auth_url}",
  description: "Authorization server and public onboarding MCP host",
};
const API_SERVER = {
  url: "{api_url}",
  description: "Workspace resource server and workspace MCP host",
};

export function buildOpenApiDocument(): Record<string, unknown> {
  const schemas = toJsonSchemaDefs(COMPONENT_SCHEMAS, {
    target: "draft-2020-12",
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
    overrideSchema: ({ valibotSchema }) =>
      valibotSchema === JsonObjectSchema ? { type: "object" } : undefined,
  });
  return {
    openapi: "3.1.1",
    info: {
      title: "Vestibule",
      version: "1.0.0",
      description:
        "Public reads, OAuth discovery and read-only MCP tool discovery of Vestibule. Business operations are MCP tools behind OAuth, discovered at runtime with `tools/list`; only tool discovery is described here.",
    },
    externalDocs: { description: "Developer reference", url: "{base_url}/developers" },
    servers: [{ url: "{base_url}", description: "Public website" }],
    paths: _paths(),
    components: {
      schemas,
      securitySchemes: {
        oauth2: {
          type: "oauth2",
          description:
            "Authorization code with PKCE (S256). Send `resource={api_url}` in the authorization and token requests. A human signs in, selects a business and consents. Start with `app.access`; request further scopes only for an operation the human authorized. Authorization-server metadata: {auth_url}/.well-known/oauth-authorization-server/api/auth.",
          flows: {
            authorizationCode: {
              authorizationUrl: "{auth_url}/api/auth/oauth2/authorize",
              tokenUrl: "{auth_url}/api/auth/oauth2/token",
              refreshUrl: "{auth_url}/api/auth/oauth2/token",
              scopes: { ...SCOPE_MEANINGS },
            },
          },
        },
      },
    },
  };
}

/** Each public read and MCP endpoint the document describes, by path. */
function _paths(): Record<string, unknown> {
  const markdown = { "text/markdown": { schema: { type: "string" } } };
  return {
    "/health": {
      get: {
        operationId: "getWebsiteHealth",
        summary: "Website health",
        description:
          "Reports only that the website process responds. It does not attest to merchant connections or workflow readiness. `Cache-Control: no-store`.",
        security: PUBLIC,
        responses: {
          "200": { description: "The process responds.", content: json(ref("Health")) },
        },
      },
    },
    "/llms.txt": _publicRead({
      operationId: "getAgentInstructions",
      summary: "Agent instructions",
      description:
        "Plain text for agents; grants no business access. On {base_url}: product guidance with links to the current connection guide, the page documents and this description. On {auth_url}: the agent connection guide itself (how to reach the workspace MCP).",
      content: { "text/plain": { schema: { type: "string" } } },
      servers: [
        { url: "{base_url}", description: "Product guidance and links to the connection guide" },
        { url: "{auth_url}", description: "The plain-text agent connection guide" },
      ],
    }),
    "/index.json": _publicRead({
      operationId: "getProductOverview",
      summary: "Product overview",
      description:
        "The product overview as a PageDocument (version 1): what the service is and is not.",
      content: json(ref("PageDocument")),
    }),
    "/index.md": _publicRead({
      operationId: "getProductOverviewMarkdown",
      summary: "Product overview as Markdown",
      description: "The same document as /index.json, rendered as Markdown.",
      content: markdown,
    }),
    "/developers.json": _publicRead({
      operationId: "getDeveloperDocumentation",
      summary: "Developer reference",
      description:
        "The developer reference as a PageDocument (version 1): endpoints, MCP request rules, OAuth, scopes, errors, limits and versioning.",
      content: json(ref("PageDocument")),
    }),
    "/developers.md": _publicRead({
      operationId: "getDeveloperDocumentationMarkdown",
      summary: "Developer reference as Markdown",
      description: "The same document as /developers.json, rendered as Markdown.",
      content: markdown,
    }),
    "/openapi.json": _publicRead({
      operationId: "getInterfaceDescription",
      summary: "This interface description",
      description:
        "The OpenAPI 3.1.1 description of the public reads and of MCP tool discovery (this document).",
      content: json({ type: "object", description: "An OpenAPI 3.1.1 document." }),
    }),
    "/.well-known/oauth-protected-resource": _publicRead({
      operationId: "getWorkspacePermissions",
      summary: "Workspace protected-resource metadata",
      description:
        "OAuth 2.0 protected-resource metadata (RFC 9728) of the workspace: its resource identifier ({api_url}), its authorization server and the supported scopes.",
      content: json(ref("ProtectedResource")),
      servers: [API_SERVER],
    }),
    [AI_CATALOG_PATH]: _publicRead({
      operationId: "getAiCatalog",
      summary: "AI Catalog of this domain's MCP servers",
      description:
        "Domain-level discovery (MCP Server Cards extension): an AI Catalog (`specVersion` 1.0) whose entries of type `application/mcp-server-card+json` point to the Server Card of each MCP server, with identifiers `urn:air:{host}:mcp:{name}`. Also answered to `Accept: application/json`.",
      content: { [AI_CATALOG_TYPE]: { schema: { type: "object" } } },
      headers: _discoveryHeaders(300),
    }),
    "/mcp/server-card": _publicRead({
      operationId: "getOnboardingServerCard",
      summary: "Server Card of the onboarding MCP",
      description:
        "The onboarding MCP endpoint's Server Card: name, version, title and description as `initialize` and `server/discover` report them, its streamable-http URL and the protocol versions it negotiates.",
      content: SERVER_CARD_CONTENT,
      servers: [AUTH_SERVER],
      headers: _discoveryHeaders(3600),
    }),
    "/api/mcp/server-card": _publicRead({
      operationId: "getWorkspaceServerCard",
      summary: "Server Card of the workspace MCP",
      description:
        "The workspace MCP endpoint's Server Card. It declares the OAuth bearer token the endpoint needs (an `Authorization` header, secret, without a value) and carries no credential.",
      content: SERVER_CARD_CONTENT,
      servers: [API_SERVER],
      headers: _discoveryHeaders(3600),
    }),
    "/mcp": {
      ..._mcpPost({
        operationId: "listOnboardingTools",
        summary: "List the onboarding tools (public onboarding MCP)",
        description:
          "The public onboarding MCP endpoint: setup guidance and account-creation tools. No credentials and no session ID (stateless); it grants no business access.",
        server: AUTH_SERVER,
        security: PUBLIC,
        bodyLimit: "16 KiB",
        authenticated: false,
      }),
      get: _mcpGet("getOnboardingMcpNotAllowed", AUTH_SERVER),
    },
    "/api/mcp": {
      ..._mcpPost({
        operationId: "listWorkspaceTools",
        summary: "List the workspace tools (workspace MCP)",
        description:
          "The workspace MCP endpoint: business tools behind OAuth. Send `Authorization: Bearer ACCESS_TOKEN` (scope `app.access`) to this endpoint only.",
        server: API_SERVER,
        security: [{ oauth2: ["app.access"] }],
        bodyLimit: "64 KiB",
        authenticated: true,
      }),
      get: _mcpGet("getWorkspaceMcpNotAllowed", API_SERVER),
    },
  };
}

/** The exact text of static/openapi.json. */
export function openApiText(): string {
  return JSON.stringify(buildOpenApiDocument(), null, 2) + "\n";
}
