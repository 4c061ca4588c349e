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
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
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

/** Implementation-defined server error (JSON-RPC §5.1): carried by every HTTP transport error. */
export const TRANSPORT_ERROR = -32000;
