// JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1) and the one error class of the MCP core.
import { JSONRPC_VERSION, type RequestId, type RpcError } from "./messages.ts";

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A protocol error that becomes an RpcError response; its message speaks to the client. */
export class JsonRpcError extends Error {
  override name = "JsonRpcError";
  readonly code: number;
  readonly data?: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** The RpcError message for a request id (null when the id could not be read). */
export function rpcError(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): RpcError {
  const error = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: JSONRPC_VERSION, id, error };
}

/**
 * Implementation-defined server error (JSON-RPC §5.1) of the HTTP transport errors that come
 * before any JSON-RPC is read (origin, media types, size, rate limit). MCP 2026-07-28 "Error
 * Codes" keeps -32000 to -32019 for such existing use and reserves -32020 to -32099 for its own.
 */
export const TRANSPORT_ERROR = -32000;

/** MCP 2026-07-28: the request metadata headers are missing or disagree with the body. */
export const HEADER_MISMATCH = -32020;
/** MCP 2026-07-28: the request's protocol version is not one this server speaks. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/**
 * MCP 2026-07-28: the request needs a client capability it did not declare; `data` names it
 * (`requiredCapabilities`).
 */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
/** MCP 2025-11-25: the request needs the person to open a URL first (URLElicitationRequiredError). */
export const URL_ELICITATION_REQUIRED = -32042;
