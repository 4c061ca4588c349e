/**
 * Vestibule's own MCP client for one upstream (the interface; the transports implement it).
 * Speaks 2026-07-28 to an upstream that answers server/discover, else the 2025 handshake
 * (2025-11-25, 2025-06-18) with its session; over Streamable HTTP or a stdio child.
 */

/** A tool as the upstream lists it: the wire object, checked to have a name and object schema. */
export type UpstreamTool = Readonly<Record<string, unknown>> & {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: { readonly type: "object" } & Readonly<Record<string, unknown>>;
  readonly outputSchema?: { readonly type: "object" } & Readonly<Record<string, unknown>>;
  readonly annotations?: Readonly<Record<string, unknown>>;
  readonly _meta?: Readonly<Record<string, unknown>>;
};

/** A tools/call result as the upstream sent it (content, structuredContent, isError, _meta). */
export type UpstreamResult = Readonly<Record<string, unknown>> & {
  readonly content: readonly unknown[];
  readonly isError?: boolean;
  /** The task the upstream started instead of answering (a call with `task`); content is empty. */
  readonly task?: Readonly<Record<string, unknown>>;
};

/** What may be asked of a task an upstream started (2025-11-25 experimental tasks). */
export type UpstreamTaskMethod = "tasks/get" | "tasks/result" | "tasks/cancel";

/** An upstream's answer to a request, as it came: its result or its JSON-RPC error. */
export type UpstreamAnswer =
  | { readonly result: Readonly<Record<string, unknown>> }
  | { readonly error: { readonly code: number; readonly message: string } };

export interface CallOptions {
  /** Aborts the call: the upstream is told (notifications/cancelled) and the answer dropped. */
  readonly signal?: AbortSignal;
  /** Each progress notification of this call, as it comes. */
  readonly onProgress?: (progress: number, total?: number, message?: string) => void;
  /** Extra `_meta` of the request (who is asking, when the operator allows it). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Asks for a task (2025-11-25 `params.task`): the upstream may answer with one (`task`). */
  readonly task?: boolean;
}

export interface McpClient {
  /** The revision spoken since the last (re)connection; null before the first. */
  readonly version: string | null;
  /** Every tool, all pages; tools with an unusable definition are left out and logged. */
  listTools(signal?: AbortSignal): Promise<UpstreamTool[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<UpstreamResult>;
  /** A request about a task this upstream started, within the upstream's deadline. */
  taskRequest(
    method: UpstreamTaskMethod,
    taskId: string,
    signal?: AbortSignal,
  ): Promise<UpstreamAnswer>;
  /** Called when the upstream says its tool list changed, and after each new session. */
  onToolsChanged(listener: () => void): void;
  /** Ends the session (HTTP DELETE where it has one) or stops the child. */
  close(): Promise<void>;
}

/**
 * Why an upstream could not answer, in plain words that name the upstream and never its
 * headers or secrets; the gateway turns it into a tool error.
 */
type UpstreamErrorKind =
  | "unreachable"
  | "timeout"
  | "protocol"
  | "too_large"
  | "cancelled"
  | "ended"
  | "unauthorized"
  | "insufficient_scope";

export class UpstreamError extends Error {
  override name = "UpstreamError";
  readonly kind: UpstreamErrorKind;
  /** With `unauthorized`: the upstream's WWW-Authenticate challenge, if it sent one. */
  readonly challenge: string | null;
  /** With `insufficient_scope`: the scopes its challenge says the call needs (RFC 6750 §3.1). */
  readonly requiredScopes: readonly string[];
  constructor(
    kind: UpstreamErrorKind,
    message: string,
    challenge: string | null = null,
    requiredScopes: readonly string[] = [],
  ) {
    super(message);
    this.kind = kind;
    this.challenge = challenge;
    this.requiredScopes = requiredScopes;
  }
}
