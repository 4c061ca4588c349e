// Per-request negotiation (MCP 2026-07-28 "Versioning", Streamable HTTP "Request Metadata"):
// every source of a request's version, and the metadata headers, in a table.
import assert from "node:assert/strict";
import { classifyMessage } from "../../src/mcp/codec.ts";
import { decodeHeaderValue, negotiate } from "../../src/mcp/negotiation.ts";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function run(headers: Record<string, string>, message: unknown) {
  const decoded = classifyMessage(message);
  if (decoded.kind === "invalid") throw new Error("the test message must be valid JSON-RPC");
  return negotiate(new Headers(headers), decoded);
}

const request = (method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 42,
  method,
  ...(params === undefined ? {} : { params }),
});

const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({
  "MCP-Protocol-Version": "2026-07-28",
  "Mcp-Method": method,
  ...extra,
});

Deno.test("negotiation: the revision each request speaks", async (t) => {
  const accepted: {
    name: string;
    headers: Record<string, string>;
    message: unknown;
    version: string;
  }[] = [
    {
      name: "a 2025-11-25 request by its header",
      headers: { "MCP-Protocol-Version": "2025-11-25" },
      message: request("tools/list"),
      version: "2025-11-25",
    },
    {
      name: "a 2025-06-18 request by its header",
      headers: { "MCP-Protocol-Version": "2025-06-18" },
      message: request("tools/list"),
      version: "2025-06-18",
    },
    {
      name: "a legacy request whose _meta repeats its header",
      headers: { "MCP-Protocol-Version": "2025-11-25" },
      message: request("tools/list", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
      }),
      version: "2025-11-25",
    },
    {
      name: "initialize without a header, in the version it asks for",
      headers: {},
      message: request("initialize", { protocolVersion: "2025-06-18" }),
      version: "2025-06-18",
    },
    {
      name: "initialize asking for 2026-07-28 (which has no initialize): the newest legacy one",
      headers: {},
      message: request("initialize", { protocolVersion: "2026-07-28" }),
      version: "2025-11-25",
    },
    {
      name: "a 2026-07-28 request with its _meta and Mcp-Method",
      headers: modernHeaders("tools/list"),
      message: request("tools/list", { _meta: MODERN_META }),
      version: "2026-07-28",
    },
    {
      name: "a 2026-07-28 request without client info (a SHOULD)",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { sampling: {} },
        },
      }),
      version: "2026-07-28",
    },
    {
      name: "a 2026-07-28 request with a log level and a progress token",
      headers: modernHeaders("tools/list"),
      message: request("tools/list", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/logLevel": "info", progressToken: 1 },
      }),
      version: "2026-07-28",
    },
    {
      name: "header values with optional whitespace around them",
      headers: modernHeaders(" tools/call ", {
        "MCP-Protocol-Version": " 2026-07-28",
        "Mcp-Name": "  echo\t",
      }),
      message: request("tools/call", { name: "echo", _meta: MODERN_META }),
      version: "2026-07-28",
    },
    {
      name: "Mcp-Name in the Base64 sentinel form",
      headers: modernHeaders("tools/call", { "Mcp-Name": "=?base64?ZWNobw==?=" }),
      message: request("tools/call", { name: "echo", _meta: MODERN_META }),
      version: "2026-07-28",
    },
    {
      name: "a 2026-07-28 notification (the revision sets no header rules for them)",
      headers: { "MCP-Protocol-Version": "2026-07-28" },
      message: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
      version: "2026-07-28",
    },
  ];
  for (const c of accepted) {
    await t.step(`accepts ${c.name}`, () => {
      assert.deepEqual(run(c.headers, c.message), { ok: true, version: c.version });
    });
  }

  const refused: {
    name: string;
    headers: Record<string, string>;
    message: unknown;
    code: number;
    text: RegExp;
    data?: unknown;
  }[] = [
    {
      name: "a request without MCP-Protocol-Version",
      headers: {},
      message: request("tools/list"),
      code: -32020,
      text: /header is missing; supported versions: 2026-07-28, 2025-11-25, 2025-06-18$/,
    },
    {
      name: "a 2026-07-28 _meta without the header",
      headers: { "Mcp-Method": "tools/list" },
      message: request("tools/list", { _meta: MODERN_META }),
      code: -32020,
      text: /header is missing; it must repeat the _meta protocol version/,
    },
    {
      name: "initialize whose _meta claims 2026-07-28, without the header",
      headers: {},
      message: request("initialize", { protocolVersion: "2025-11-25", _meta: MODERN_META }),
      code: -32020,
      text: /header is missing/,
    },
    {
      name: "an unknown version",
      headers: { "MCP-Protocol-Version": "v999.0.0" },
      message: request("tools/list"),
      code: -32022,
      text: /"v999.0.0" is not supported; supported versions: 2026-07-28, 2025-11-25, 2025-06-18/,
      data: { supported: ["2026-07-28", "2025-11-25", "2025-06-18"], requested: "v999.0.0" },
    },
    {
      name: "an unknown version in both header and _meta",
      headers: modernHeaders("server/discover", { "MCP-Protocol-Version": "v999.0.0" }),
      message: request("server/discover", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
      }),
      code: -32022,
      text: /"v999.0.0" is not supported/,
    },
    {
      name: "a header that disagrees with _meta",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
      }),
      code: -32020,
      text:
        /MCP-Protocol-Version "2026-07-28" does not match _meta "io.modelcontextprotocol\/protocolVersion" "v999.0.0"/,
    },
    {
      name: "a legacy header with a 2026-07-28 _meta",
      headers: modernHeaders("tools/list", { "MCP-Protocol-Version": "2025-11-25" }),
      message: request("tools/list", { _meta: MODERN_META }),
      code: -32020,
      text: /"2025-11-25" does not match/,
    },
    {
      name: "a legacy header with a _meta version that is not a string",
      headers: { "MCP-Protocol-Version": "2025-11-25" },
      message: request("tools/list", {
        _meta: { "io.modelcontextprotocol/protocolVersion": 2025 },
      }),
      code: -32020,
      text: /does not match _meta "io.modelcontextprotocol\/protocolVersion" 2025/,
    },
    {
      name: "a 2026-07-28 request without _meta",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {}),
      code: -32602,
      text: /^Invalid params: "params\._meta" is missing$/,
    },
    {
      name: "a 2026-07-28 _meta without its protocol version",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { "io.modelcontextprotocol/clientCapabilities": {} },
      }),
      code: -32602,
      text: /"params\._meta\.io\.modelcontextprotocol\/protocolVersion"/,
    },
    {
      name: "a 2026-07-28 _meta without client capabilities",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
      }),
      code: -32602,
      text: /"params\._meta\.io\.modelcontextprotocol\/clientCapabilities"/,
    },
    {
      name: "client capabilities that are an array",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/clientCapabilities": [] },
      }),
      code: -32602,
      text: /clientCapabilities" must be an object, not Array$/,
    },
    {
      name: "client info without a version",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/clientInfo": { name: "c" } },
      }),
      code: -32602,
      text: /"params\._meta\.io\.modelcontextprotocol\/clientInfo\.version"/,
    },
    {
      name: "an unknown log level",
      headers: modernHeaders("server/discover"),
      message: request("server/discover", {
        _meta: { ...MODERN_META, "io.modelcontextprotocol/logLevel": "loud" },
      }),
      code: -32602,
      text: /logLevel"/,
    },
    {
      name: "a 2026-07-28 request without Mcp-Method",
      headers: { "MCP-Protocol-Version": "2026-07-28" },
      message: request("tools/list", { _meta: MODERN_META }),
      code: -32020,
      text: /the Mcp-Method header is missing; it must repeat the method "tools\/list"/,
    },
    {
      name: "an Mcp-Method naming another method",
      headers: modernHeaders("prompts/list"),
      message: request("tools/list", { _meta: MODERN_META }),
      code: -32020,
      text: /Mcp-Method "prompts\/list" does not match the method "tools\/list"/,
    },
    {
      name: "an Mcp-Method in other letter case (values are case-sensitive)",
      headers: modernHeaders("TOOLS/LIST"),
      message: request("tools/list", { _meta: MODERN_META }),
      code: -32020,
      text: /"TOOLS\/LIST" does not match/,
    },
    {
      name: "a tools/call without Mcp-Name",
      headers: modernHeaders("tools/call"),
      message: request("tools/call", { name: "echo", _meta: MODERN_META }),
      code: -32020,
      text: /the Mcp-Name header is missing; it must repeat params.name "echo"/,
    },
    {
      name: "an Mcp-Name naming another tool",
      headers: modernHeaders("tools/call", { "Mcp-Name": "wrong_tool" }),
      message: request("tools/call", { name: "echo", _meta: MODERN_META }),
      code: -32020,
      text: /Mcp-Name "wrong_tool" does not match params.name "echo"/,
    },
    {
      name: "an Mcp-Name whose Base64 is broken",
      headers: modernHeaders("tools/call", { "Mcp-Name": "=?base64?ZWNobw?=" }),
      message: request("tools/call", { name: "echo", _meta: MODERN_META }),
      code: -32020,
      text: /Mcp-Name "=\?base64\?ZWNobw\?=" is not valid/,
    },
  ];
  for (const c of refused) {
    await t.step(`refuses ${c.name} with ${c.code}, carrying the request's id`, () => {
      const outcome = run(c.headers, c.message);
      assert.equal(outcome.ok, false);
      if (outcome.ok) return;
      const id = (c.message as { id?: unknown }).id ?? null;
      assert.equal(outcome.error.id, id);
      assert.equal(outcome.error.error.code, c.code);
      assert.match(outcome.error.error.message, c.text);
      if (c.data !== undefined) assert.deepEqual(outcome.error.error.data, c.data);
    });
  }
});

Deno.test("negotiation: header values in the Base64 sentinel form", async (t) => {
  const cases: { value: string; decoded: string | undefined }[] = [
    { value: "echo", decoded: "echo" },
    { value: "=?base64?SGVsbG8sIOS4lueVjA==?=", decoded: "Hello, 世界" },
    { value: "=?base64?IHBhZGRlZCA=?=", decoded: " padded " },
    { value: "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", decoded: "=?base64?literal?=" },
    { value: "=?base64?SGVsbG8?=", decoded: undefined }, // padding missing
    { value: "=?base64?SGVs!!!bG8=?=", decoded: undefined }, // not the alphabet
    { value: "=?base64?/w==?=", decoded: undefined }, // not UTF-8
    { value: "=?BASE64?ZWNobw==?=", decoded: "=?BASE64?ZWNobw==?=" }, // markers are lower case
  ];
  for (const c of cases) {
    await t.step(`${JSON.stringify(c.value)} -> ${JSON.stringify(c.decoded)}`, () => {
      assert.equal(decodeHeaderValue(c.value), c.decoded);
    });
  }
});
