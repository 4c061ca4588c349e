// Which revision a request speaks, decided for each request from what it carries (MCP
// 2026-07-28 "Versioning": a dual-era server serves both eras on one endpoint): the
// MCP-Protocol-Version header, the `_meta` protocol version of a 2026-07-28 request, and for
// a header-less `initialize` the legacy handshake itself. Every source present must agree.
// A 2026-07-28 request also carries its capabilities in `_meta` and mirrors its method and
// name into headers (Streamable HTTP "Request Metadata"), checked here before dispatch.
// Pure: header values and the decoded message in, the revision or the error to answer
// with 400 out.
import * as v from "valibot";
import type { Decoded } from "./codec.ts";
import {
  HEADER_MISMATCH,
  INVALID_PARAMS,
  rpcError,
  UNSUPPORTED_PROTOCOL_VERSION,
} from "./errors.ts";
import { describeIssues } from "../issue_words.ts";
import { META, ModernRequestMetaSchema, type RequestId, type RpcError } from "./messages.ts";
import {
  isModern,
  isSupportedVersion,
  negotiateVersion,
  type ProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
  SUPPORTED_VERSIONS_TEXT,
} from "./versions.ts";

/** The request's headers; only the three metadata headers are read, and only when needed. */
export type MetadataHeaders = Pick<Headers, "get">;

export type Negotiation =
  | { readonly ok: true; readonly version: ProtocolVersion }
  /** Answered with 400 (2026-07-28 "Server Validation"); the error carries the request's id. */
  | { readonly ok: false; readonly error: RpcError };

type Message = Exclude<Decoded, { kind: "invalid" }>;

/** The param each method's `Mcp-Name` header mirrors (tasks.md "Routing Headers": the task id). */
const NAMED_METHODS: ReadonlyMap<string, string> = new Map([
  ["tools/call", "name"],
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"],
]);

export function negotiate(headers: MetadataHeaders, message: Message): Negotiation {
  const request = message.kind === "request" ? message.request : undefined;
  const body = message.kind === "request"
    ? message.request
    : message.kind === "notification"
    ? message.notification
    : undefined;
  const id = request?.id ?? null;
  const meta = body?.params?._meta as Record<string, unknown> | undefined;
  const claimed = meta?.[META.protocolVersion];
  const header = _trim(headers.get("MCP-Protocol-Version"));

  if (header === undefined) {
    if (claimed === undefined && request?.method === "initialize") {
      // The legacy handshake comes before any version header (MCP 2025-11-25 "Lifecycle").
      const asked = request.params?.["protocolVersion"];
      return { ok: true, version: negotiateVersion(typeof asked === "string" ? asked : "") };
    }
    return _mismatch(
      id,
      claimed === undefined
        ? `the MCP-Protocol-Version header is missing; supported versions: ${SUPPORTED_VERSIONS_TEXT}`
        : "the MCP-Protocol-Version header is missing; it must repeat the _meta protocol version",
    );
  }
  const disagree = () =>
    _mismatch(
      id,
      `MCP-Protocol-Version ${JSON.stringify(header)} does not match ` +
        `_meta ${JSON.stringify(META.protocolVersion)} ${JSON.stringify(claimed)}`,
    );
  if (typeof claimed === "string" && claimed !== header) return disagree();
  if (!isSupportedVersion(header)) {
    return {
      ok: false,
      error: rpcError(
        id,
        UNSUPPORTED_PROTOCOL_VERSION,
        `Unsupported protocol version: ${JSON.stringify(header)} is not supported; ` +
          `supported versions: ${SUPPORTED_VERSIONS_TEXT}`,
        { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: header },
      ),
    };
  }
  if (!isModern(header)) {
    return claimed === undefined || claimed === header ? { ok: true, version: header } : disagree();
  }
  if (request === undefined) return { ok: true, version: header };

  // 2026-07-28 "General fields: _meta": a request without its version or capabilities is
  // malformed (-32602, 400).
  if (!_isUsualMeta(meta, header)) {
    const parsed = v.safeParse(ModernRequestMetaSchema, meta);
    if (!parsed.success) {
      const issues = describeIssues(parsed.issues, "params._meta");
      return { ok: false, error: rpcError(id, INVALID_PARAMS, `Invalid params: ${issues}`) };
    }
  }
  const method = _trim(headers.get("Mcp-Method"));
  if (method !== request.method) {
    return _mismatch(
      id,
      method === undefined
        ? `the Mcp-Method header is missing; it must repeat the method ${
          JSON.stringify(request.method)
        }`
        : `Mcp-Method ${JSON.stringify(method)} does not match the method ${
          JSON.stringify(request.method)
        }`,
    );
  }
  const named = NAMED_METHODS.get(request.method);
  const name = named === undefined ? undefined : request.params?.[named];
  if (typeof name === "string") {
    const raw = _trim(headers.get("Mcp-Name"));
    const decoded = raw === undefined ? undefined : decodeHeaderValue(raw);
    if (decoded !== name) {
      return _mismatch(
        id,
        raw === undefined
          ? `the Mcp-Name header is missing; it must repeat params.${named} ${JSON.stringify(name)}`
          : decoded === undefined
          ? `Mcp-Name ${JSON.stringify(raw)} is not valid =?base64?…?= encoding`
          : `Mcp-Name ${JSON.stringify(decoded)} does not match params.${named} ${
            JSON.stringify(name)
          }`,
      );
    }
  }
  return { ok: true, version: header };
}

/**
 * A body value as a header carries it (2026-07-28 "Value Encoding"): literal when it is
 * visible ASCII and spaces without spaces at either end and does not look encoded, else
 * `=?base64?…?=` of its UTF-8. decodeHeaderValue reverses it.
 */
export function encodeHeaderValue(value: string): string {
  const literal = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) &&
    decodeHeaderValue(value) === value;
  if (literal) return value;
  const bytes = new TextEncoder().encode(value);
  return `=?base64?${btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""))}?=`;
}

/**
 * A header value as the body has it: `=?base64?…?=` is Base64 of UTF-8 (2026-07-28 "Value
 * Encoding"), anything else is literal. Undefined when the encoding is broken.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!value.startsWith("=?base64?") || !value.endsWith("?=") || value.length < 11) return value;
  const encoded = value.slice(9, -2);
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
  try {
    const bytes = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The `_meta` nearly every 2026-07-28 request sends, checked without valibot: the version as
 * a string, capabilities as an object, client info with a string name and version, and no
 * log level. ModernRequestMetaSchema accepts all of these; anything else goes through the
 * schema, so errors read the same.
 */
function _isUsualMeta(
  meta: Record<string, unknown> | undefined,
  version: string,
): boolean {
  if (meta === undefined || meta[META.protocolVersion] !== version) return false;
  if (!_isObject(meta[META.clientCapabilities]) || META.logLevel in meta) return false;
  const info = meta[META.clientInfo];
  if (info === undefined) return true;
  return _isObject(info) && typeof info["name"] === "string" &&
    typeof info["version"] === "string" &&
    (info["title"] === undefined || typeof info["title"] === "string");
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Header values without the optional whitespace around them (RFC 9110 §5.5). */
function _trim(value: string | null): string | undefined {
  return value === null ? undefined : value.trim();
}

function _mismatch(id: RequestId | null, problem: string): Negotiation {
  return { ok: false, error: rpcError(id, HEADER_MISMATCH, `Bad Request: ${problem}`) };
}
