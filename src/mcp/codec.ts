// Bytes -> one classified JSON-RPC message, and messages -> JSON text. No HTTP here.
import * as v from "valibot";
import { INVALID_REQUEST, PARSE_ERROR, rpcError } from "./errors.ts";
import { describeIssues } from "../issue_words.ts";
import {
  JSONRPC_VERSION,
  type JsonRpcNotification,
  JsonRpcNotificationSchema,
  type JsonRpcRequest,
  JsonRpcRequestSchema,
  JsonRpcResponseSchema,
  type RequestId,
  RequestIdSchema,
  type RpcError,
} from "./messages.ts";

export type Decoded =
  | { readonly kind: "request"; readonly request: JsonRpcRequest }
  | { readonly kind: "notification"; readonly notification: JsonRpcNotification }
  /** A response posted by the client; we never send requests, so it is only acknowledged. */
  | { readonly kind: "response" }
  | { readonly kind: "invalid"; readonly error: RpcError };

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function decodeMessage(body: Uint8Array): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch {
    return _invalid(null, PARSE_ERROR, "Parse error: the body is not valid UTF-8 JSON");
  }
  return classifyMessage(value);
}

export function classifyMessage(value: unknown): Decoded {
  if (Array.isArray(value)) {
    return _invalid(
      null,
      INVALID_REQUEST,
      "Invalid request: batches are not supported; send one JSON-RPC message per request",
    );
  }
  if (typeof value !== "object" || value === null) {
    return _invalid(null, INVALID_REQUEST, "Invalid request: expected a JSON-RPC object");
  }
  if (_isPlainRequest(value)) return { kind: "request", request: value };
  const id = _readableId(value);
  // valibot's object schemas accept arrays; MCP params are always an object.
  if (Array.isArray((value as { params?: unknown }).params)) {
    return _invalid(id, INVALID_REQUEST, 'Invalid request: "params" must be an object');
  }
  if ("method" in value) {
    if ("id" in value) {
      const parsed = v.safeParse(JsonRpcRequestSchema, value);
      if (parsed.success) return { kind: "request", request: parsed.output };
      return _invalid(id, INVALID_REQUEST, `Invalid request: ${describeIssues(parsed.issues)}`);
    }
    const parsed = v.safeParse(JsonRpcNotificationSchema, value);
    if (parsed.success) return { kind: "notification", notification: parsed.output };
    return _invalid(
      null,
      INVALID_REQUEST,
      `Invalid notification: ${describeIssues(parsed.issues)}`,
    );
  }
  if ("result" in value || "error" in value) {
    const parsed = v.safeParse(JsonRpcResponseSchema, value);
    if (parsed.success) return { kind: "response" };
    return _invalid(id, INVALID_REQUEST, `Invalid response: ${describeIssues(parsed.issues)}`);
  }
  return _invalid(id, INVALID_REQUEST, 'Invalid request: "method" is missing');
}

/**
 * A success response around a result that is already JSON text (precomputed pages). Kept a
 * string: Deno encodes a string body while sending it, whereas a Uint8Array body is converted
 * and copied when the Response is made (ten times the cost for a 6 KiB page, measured).
 */
export function encodeResult(id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export function encodeMessage(message: unknown): string {
  return JSON.stringify(message);
}

const _REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

/**
 * The usual request, checked without valibot: only the four keys of a request, version
 * "2.0", an integer or string id, a string method, and no params or params of plain keys
 * whose `_meta`, if any, is an object with no progressToken or a string or integer one.
 * JsonRpcRequestSchema accepts exactly such a value and outputs an equal copy; anything else,
 * valid or not, goes through the schema, so errors read the same.
 */
function _isPlainRequest(value: object): value is JsonRpcRequest {
  const message = value as Record<string, unknown>;
  for (const key in message) if (!_REQUEST_KEYS.has(key)) return false;
  const { id, params } = message;
  return message["jsonrpc"] === JSONRPC_VERSION &&
    (typeof id === "string" || Number.isInteger(id)) &&
    typeof message["method"] === "string" &&
    (params === undefined ||
      (_isObject(params) && !_hasUncopiedKey(params) && _isPlainMeta(params["_meta"])));
}

function _isPlainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  if (!_isObject(meta) || _hasUncopiedKey(meta)) return false;
  const token = meta["progressToken"];
  return token === undefined || typeof token === "string" || Number.isInteger(token);
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Keys valibot leaves out of its copies; JSON.parse makes `"__proto__"` an own key. */
function _hasUncopiedKey(params: object): boolean {
  return Object.hasOwn(params, "__proto__") || Object.hasOwn(params, "constructor") ||
    Object.hasOwn(params, "prototype");
}

function _readableId(value: object): RequestId | null {
  const id = (value as { id?: unknown }).id;
  return v.is(RequestIdSchema, id) ? id : null;
}

function _invalid(id: RequestId | null, code: number, message: string): Decoded {
  return { kind: "invalid", error: rpcError(id, code, message) };
}
